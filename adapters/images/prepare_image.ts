/**
 * Prepares an uploaded image for a model: checks it, turns it upright,
 * shrinks it to a size models accept, and re-encodes it compactly.
 *
 * @module
 */

import { FloretError } from "../../src/errors.ts";
import { decodeBitmap, encodeBest } from "./image_codec.ts";
import { applyOrientation, readJpegOrientation } from "./exif_orientation.ts";
import { downscale } from "./downscale.ts";
import { countGifFrames } from "./gif_frames.ts";
import { decodeWebp } from "./webp_codec.ts";
import { readImageHeader } from "./image_header.ts";

/** Longest side, in pixels, of the image a model receives by default. */
export const DEFAULT_MAX_LONGEST_SIDE = 2048;
/** JPEG quality (1–100) used by default. */
export const DEFAULT_JPEG_QUALITY = 85;
/** Largest accepted input by default: 20 MiB. */
export const DEFAULT_MAX_SOURCE_BYTES = 20 * 1024 * 1024;
/** Most pixels accepted by default: 50 megapixels (a 200 MB RGBA bitmap). */
export const DEFAULT_MAX_PIXELS = 50_000_000;

/** Limits and encoding settings for {@link prepareModelImage}. */
export interface PrepareImageOptions {
  /** Longest side of the output, in pixels; default {@link DEFAULT_MAX_LONGEST_SIDE}. */
  maxLongestSide?: number | undefined;
  /** JPEG quality, 1–100; default {@link DEFAULT_JPEG_QUALITY}. */
  quality?: number | undefined;
  /** Largest input in bytes; default {@link DEFAULT_MAX_SOURCE_BYTES}. */
  maxSourceBytes?: number | undefined;
  /** Most input pixels (width × height); default {@link DEFAULT_MAX_PIXELS}. */
  maxPixels?: number | undefined;
}

/** An image ready to attach to a user message. */
export interface PreparedImage {
  /** The encoded output. */
  bytes: Uint8Array;
  /** The output format. */
  mediaType: "image/png" | "image/jpeg" | "image/gif";
  /** Size of the input, upright (after EXIF orientation). */
  original: { width: number; height: number };
  /** Size of the output. */
  model: { width: number; height: number };
  /** SHA-256 of the input bytes, lowercase hex. */
  sourceSha256: string;
}

function invalid(message: string, cause?: unknown): FloretError {
  return new FloretError("invalid_input", message, cause === undefined ? undefined : { cause });
}

function positiveInteger(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < 1) {
    throw invalid(`Image option must be a positive integer: ${name} = ${value}`);
  }
  return value;
}

async function sha256Hex(bytes: Uint8Array): Promise<string> {
  // The copy gives Web Crypto a plain ArrayBuffer-backed view, as its types require.
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new Uint8Array(bytes)));
  return Array.from(digest, (byte) => byte.toString(16).padStart(2, "0")).join("");
}

/** The largest size with the same aspect ratio whose longest side fits. */
function fitWithin(width: number, height: number, longest: number) {
  const scale = longest / Math.max(width, height);
  if (scale >= 1) return { width, height };
  return {
    width: Math.max(1, Math.round(width * scale)),
    height: Math.max(1, Math.round(height * scale)),
  };
}

/**
 * Prepares image bytes for a model. PNG, JPEG, static GIF and still WebP
 * (lossy or lossless, decoded with the optional `@jsquash/webp`) are decoded,
 * turned upright (JPEG EXIF orientation), shrunk so the longest side is at
 * most `maxLongestSide`, and re-encoded: JPEG stays JPEG at `quality`;
 * images with transparency become PNG; opaque PNG, GIF and WebP become whichever
 * of PNG and JPEG is smaller. Re-encoding also drops metadata such as EXIF
 * location. Animated GIFs are passed through unchanged when within bounds.
 * The format is sniffed from magic bytes.
 *
 * @param bytes the uploaded file
 * @param options limits and JPEG quality; every field has a documented default
 * @returns the prepared image and its provenance
 * @throws {FloretError} `invalid_input` for bad options, input over
 *   `maxSourceBytes` or `maxPixels`, unsupported formats, animated WebP,
 *   truncated or undecodable data, and animated GIFs larger than `maxLongestSide`
 * @example
 * ```ts
 * import { Image } from "imagescript";
 * import { prepareModelImage } from "@floret/engine/images";
 * const png = await new Image(4000, 1000).fill(0x336699ff).encode();
 * const prepared = await prepareModelImage(png);
 * console.log(prepared.model); // { width: 2048, height: 512 }
 * ```
 */
export async function prepareModelImage(
  bytes: Uint8Array,
  options: PrepareImageOptions = {},
): Promise<PreparedImage> {
  const maxLongestSide = positiveInteger(
    "maxLongestSide",
    options.maxLongestSide,
    DEFAULT_MAX_LONGEST_SIDE,
  );
  const quality = positiveInteger("quality", options.quality, DEFAULT_JPEG_QUALITY);
  if (quality > 100) throw invalid(`Image option must be at most 100: quality = ${quality}`);
  const maxSourceBytes = positiveInteger(
    "maxSourceBytes",
    options.maxSourceBytes,
    DEFAULT_MAX_SOURCE_BYTES,
  );
  const maxPixels = positiveInteger("maxPixels", options.maxPixels, DEFAULT_MAX_PIXELS);
  if (!(bytes instanceof Uint8Array)) throw invalid("Image bytes must be a Uint8Array");
  if (bytes.length > maxSourceBytes) {
    throw invalid(`Image is too large: ${bytes.length} bytes > ${maxSourceBytes}`);
  }

  const header = readImageHeader(bytes);
  if (header === null) {
    throw invalid("Image format is not recognised: expected PNG, JPEG, GIF or WebP");
  }
  // libwebp's still-image decoder cannot read animations; say so rather than keep one frame.
  if (header.animated) throw invalid("Animated WebP is not supported");
  const { width, height } = header;
  if (width < 1 || height < 1) throw invalid(`Image has no pixels: ${width}×${height}`);
  if (width * height > maxPixels) {
    throw invalid(`Image has too many pixels: ${width}×${height} > ${maxPixels}`);
  }
  const sourceSha256 = await sha256Hex(bytes);

  if (header.format === "gif") {
    const frames = countGifFrames(bytes);
    if (frames === null || frames === 0) throw invalid("GIF is truncated or malformed");
    if (frames > 1) {
      // Re-encoding animation would cost quality and time; pass it through or refuse.
      if (Math.max(width, height) > maxLongestSide) {
        throw invalid(
          `Animated GIF is too large: ${width}×${height}, longest side > ${maxLongestSide}`,
        );
      }
      const size = { width, height };
      return { bytes, mediaType: "image/gif", original: size, model: size, sourceSha256 };
    }
  }

  let bitmap = header.format === "webp"
    ? await decodeWebp(bytes)
    : await decodeBitmap(bytes, header.format);
  if (bitmap.width !== width || bitmap.height !== height) {
    throw invalid(`Image decoded to an unexpected size: ${bitmap.width}×${bitmap.height}`);
  }
  if (header.format === "jpeg") bitmap = applyOrientation(bitmap, readJpegOrientation(bytes));
  const original = { width: bitmap.width, height: bitmap.height };
  const target = fitWithin(bitmap.width, bitmap.height, maxLongestSide);
  bitmap = downscale(bitmap, target.width, target.height);
  const encoded = await encodeBest(bitmap, { jpegOnly: header.format === "jpeg", quality });
  return { ...encoded, original, model: target, sourceSha256 };
}
