/**
 * JPEG EXIF orientation: read the tag from the APP1 segment and turn the
 * stored pixels upright. Cameras store the sensor image as shot and record
 * how to display it; models get no EXIF, so the rotation must be applied.
 *
 * @module
 */

/** An RGBA bitmap, four bytes per pixel, rows top to bottom. */
export interface Bitmap {
  /** Width in pixels. */
  width: number;
  /** Height in pixels. */
  height: number;
  /** RGBA bytes, `width × height × 4` long. */
  data: Uint8Array | Uint8ClampedArray;
}

const ORIENTATION_TAG = 0x0112;
const EXIF_HEADER = [0x45, 0x78, 0x69, 0x66, 0x00, 0x00]; // "Exif\0\0"

/** Reads the orientation from a TIFF structure (the APP1 payload after "Exif\0\0"). */
function orientationFromTiff(tiff: DataView): number {
  if (tiff.byteLength < 8) return 1;
  const order = tiff.getUint16(0);
  if (order !== 0x4949 && order !== 0x4d4d) return 1; // "II" or "MM"
  const little = order === 0x4949;
  if (tiff.getUint16(2, little) !== 42) return 1;
  const ifd = tiff.getUint32(4, little);
  if (ifd + 2 > tiff.byteLength) return 1;
  const entries = tiff.getUint16(ifd, little);
  for (let i = 0; i < entries; i++) {
    const entry = ifd + 2 + i * 12;
    if (entry + 12 > tiff.byteLength) return 1;
    if (tiff.getUint16(entry, little) !== ORIENTATION_TAG) continue;
    // SHORT (type 3), one value, stored left-aligned in the 4-byte value field.
    if (tiff.getUint16(entry + 2, little) !== 3) return 1;
    const value = tiff.getUint16(entry + 8, little);
    return value >= 1 && value <= 8 ? value : 1;
  }
  return 1;
}

/**
 * Reads the EXIF orientation (1–8) of a JPEG.
 *
 * @param bytes a JPEG file
 * @returns the orientation; 1 (upright) when there is no valid tag
 */
export function readJpegOrientation(bytes: Uint8Array): number {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let at = 2;
  while (at + 4 <= bytes.length && bytes[at] === 0xff) {
    const marker = bytes[at + 1];
    if (marker === 0xda || marker === 0xd9) break; // metadata ends where the scan starts
    const length = view.getUint16(at + 2);
    if (length < 2 || at + 2 + length > bytes.length) break;
    const payload = at + 4;
    if (marker === 0xe1 && EXIF_HEADER.every((byte, i) => bytes[payload + i] === byte)) {
      const start = payload + EXIF_HEADER.length;
      return orientationFromTiff(
        new DataView(bytes.buffer, bytes.byteOffset + start, at + 2 + length - start),
      );
    }
    at += 2 + length;
  }
  return 1;
}

/**
 * Applies an EXIF orientation, producing the upright bitmap. Orientations
 * 5–8 swap width and height.
 *
 * @param bitmap the pixels as stored
 * @param orientation the EXIF value, 1–8
 * @returns the upright pixels (the input itself for orientation 1)
 */
export function applyOrientation(bitmap: Bitmap, orientation: number): Bitmap {
  if (orientation < 2 || orientation > 8) return bitmap;
  const { width: w, height: h, data } = bitmap;
  const swap = orientation >= 5;
  const outW = swap ? h : w;
  const outH = swap ? w : h;
  const out = new Uint8Array(w * h * 4);
  // For each upright pixel (x, y), where it sits in the stored image.
  const source: (x: number, y: number) => number = {
    2: (x: number, y: number) => y * w + (w - 1 - x),
    3: (x: number, y: number) => (h - 1 - y) * w + (w - 1 - x),
    4: (x: number, y: number) => (h - 1 - y) * w + x,
    5: (x: number, y: number) => x * w + y,
    6: (x: number, y: number) => (h - 1 - x) * w + y,
    7: (x: number, y: number) => (h - 1 - x) * w + (w - 1 - y),
    8: (x: number, y: number) => x * w + (w - 1 - y),
  }[orientation as 2 | 3 | 4 | 5 | 6 | 7 | 8];
  for (let y = 0; y < outH; y++) {
    for (let x = 0; x < outW; x++) {
      const from = source(x, y) * 4;
      const to = (y * outW + x) * 4;
      out[to] = data[from];
      out[to + 1] = data[from + 1];
      out[to + 2] = data[from + 2];
      out[to + 3] = data[from + 3];
    }
  }
  return { width: outW, height: outH, data: out };
}
