/**
 * Turns a prepared image into the attachment shape user messages carry.
 *
 * @module
 */

import type { ImageAttachment } from "../../src/provider/gateway.ts";
import type { PreparedImage } from "./prepare_image.ts";

// Chunked so String.fromCharCode never receives more arguments than engines allow.
const CHUNK = 0x8000;

/**
 * Standard, padded base64 using only web globals (`btoa`), so it runs the
 * same on Deno, Bun, Node and browsers.
 *
 * @param bytes any bytes
 * @returns the base64 text
 */
export function encodeBase64(bytes: Uint8Array): string {
  let binary = "";
  for (let at = 0; at < bytes.length; at += CHUNK) {
    binary += String.fromCharCode(...bytes.subarray(at, at + CHUNK));
  }
  return btoa(binary);
}

/**
 * Builds the {@link ImageAttachment} for a prepared image.
 *
 * @param image the result of `prepareModelImage`
 * @param name optional name for people, e.g. the original file name
 * @returns `{ type: "image", mediaType, dataBase64 }` (plus `name` when given)
 * @example
 * ```ts
 * import { Image } from "imagescript";
 * import { prepareModelImage, toImageAttachment } from "@floret/engine/images";
 * const png = await new Image(4, 4).fill(0xff0000ff).encode();
 * const attachment = toImageAttachment(await prepareModelImage(png), "red.png");
 * console.log(attachment.type, attachment.name); // "image" "red.png"
 * ```
 */
export function toImageAttachment(image: PreparedImage, name?: string): ImageAttachment {
  const attachment: ImageAttachment = {
    type: "image",
    mediaType: image.mediaType,
    dataBase64: encodeBase64(image.bytes),
  };
  if (name !== undefined) attachment.name = name;
  return attachment;
}
