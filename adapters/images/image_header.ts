/**
 * Reads an image's format and pixel size from its first bytes, before any
 * decoding, so oversized inputs are refused without allocating a bitmap.
 * Formats come from magic bytes only; a declared media type is never trusted.
 *
 * @module
 */

/** The formats `prepareModelImage` recognises. */
export type ImageFormat = "png" | "jpeg" | "gif" | "webp";

/** Format and pixel size as the header declares them. */
export interface ImageHeader {
  /** The sniffed format. */
  format: ImageFormat;
  /** Width in pixels. */
  width: number;
  /** Height in pixels. */
  height: number;
  /** WebP only: the file is an animation (its VP8X header says so). */
  animated?: boolean;
}

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

function startsWith(bytes: Uint8Array, prefix: readonly number[], at = 0): boolean {
  if (bytes.length < at + prefix.length) return false;
  return prefix.every((value, i) => bytes[at + i] === value);
}

function ascii(text: string): number[] {
  return [...text].map((char) => char.charCodeAt(0));
}

function uint16be(bytes: Uint8Array, at: number): number {
  return (bytes[at] << 8) | bytes[at + 1];
}

/** Finds the frame header (SOFn) by walking the marker segments. */
function jpegSize(bytes: Uint8Array): { width: number; height: number } | null {
  let at = 2;
  while (at + 4 <= bytes.length) {
    if (bytes[at] !== 0xff) return null;
    const marker = bytes[at + 1];
    if (marker === 0xff) { // fill byte before a marker
      at++;
      continue;
    }
    // Standalone markers carry no length.
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
      at += 2;
      continue;
    }
    if (marker === 0xd9 || marker === 0xda) return null; // EOI or scan before any frame
    const length = uint16be(bytes, at + 2);
    const isFrame = marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 &&
      marker !== 0xcc;
    if (isFrame) {
      if (at + 9 > bytes.length) return null;
      return { height: uint16be(bytes, at + 5), width: uint16be(bytes, at + 7) };
    }
    at += 2 + length;
  }
  return null;
}

/**
 * Sniffs the format and declared size of an image.
 *
 * @param bytes the encoded image
 * @returns the header, or `null` when the bytes are no PNG, JPEG, GIF or
 *   WebP, or the header is cut short
 */
export function readImageHeader(bytes: Uint8Array): ImageHeader | null {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (startsWith(bytes, PNG_SIGNATURE)) {
    if (bytes.length < 24 || !startsWith(bytes, ascii("IHDR"), 12)) return null;
    return { format: "png", width: view.getUint32(16), height: view.getUint32(20) };
  }
  if (startsWith(bytes, [0xff, 0xd8, 0xff])) {
    const size = jpegSize(bytes);
    return size && { format: "jpeg", ...size };
  }
  if (startsWith(bytes, ascii("GIF87a")) || startsWith(bytes, ascii("GIF89a"))) {
    if (bytes.length < 13) return null;
    return { format: "gif", width: view.getUint16(6, true), height: view.getUint16(8, true) };
  }
  if (startsWith(bytes, ascii("RIFF")) && startsWith(bytes, ascii("WEBP"), 8)) {
    return webpHeader(bytes, view);
  }
  return null;
}

/**
 * The size of a WebP image from its first chunk: `VP8 ` (lossy: the key
 * frame header), `VP8L` (lossless: 14-bit sizes after the signature byte) or
 * `VP8X` (extended: 24-bit canvas sizes and the animation flag).
 */
function webpHeader(bytes: Uint8Array, view: DataView): ImageHeader | null {
  if (bytes.length < 30) return null;
  if (startsWith(bytes, ascii("VP8 "), 12)) {
    // Frame tag (3 bytes), then the key frame start code 9d 01 2a.
    if (!startsWith(bytes, [0x9d, 0x01, 0x2a], 23)) return null;
    return {
      format: "webp",
      width: view.getUint16(26, true) & 0x3fff,
      height: view.getUint16(28, true) & 0x3fff,
    };
  }
  if (startsWith(bytes, ascii("VP8L"), 12)) {
    if (bytes[20] !== 0x2f) return null;
    const bits = view.getUint32(21, true);
    return { format: "webp", width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 };
  }
  if (startsWith(bytes, ascii("VP8X"), 12)) {
    const u24 = (at: number) => bytes[at] | (bytes[at + 1] << 8) | (bytes[at + 2] << 16);
    return {
      format: "webp",
      width: u24(24) + 1,
      height: u24(27) + 1,
      animated: (bytes[20] & 0x02) !== 0,
    };
  }
  return null;
}
