/**
 * Image preparation for model input: sniff, check, orient, shrink and
 * re-encode uploads, then attach them to a user message. A separate entry
 * point because it loads imagescript.
 *
 * @example
 * ```ts
 * import { Image } from "imagescript";
 * import { prepareModelImage, toImageAttachment } from "@floret/engine/images";
 * const upload = await new Image(3000, 2000).fill(0xffffffff).encodeJPEG(90);
 * const prepared = await prepareModelImage(upload, { maxLongestSide: 1568 });
 * const attachment = toImageAttachment(prepared, "photo.jpg");
 * console.log(prepared.model, attachment.mediaType); // { width: 1568, height: 1045 } "image/jpeg"
 * ```
 *
 * @module
 */
export {
  DEFAULT_JPEG_QUALITY,
  DEFAULT_MAX_LONGEST_SIDE,
  DEFAULT_MAX_PIXELS,
  DEFAULT_MAX_SOURCE_BYTES,
  prepareModelImage,
} from "./prepare_image.ts";
export type { PreparedImage, PrepareImageOptions } from "./prepare_image.ts";
export { toImageAttachment } from "./image_attachment.ts";

// The engine types this entry's functions take and return, re-exported so its
// documentation is complete on its own (deno doc --lint, JSR); the same types
// as `@floret/engine`.
export type { ImageAttachment } from "@floret/engine";
