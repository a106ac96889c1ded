/**
 * Checks the attachments of a user message before a gateway renders them.
 *
 * @module
 */
import type { Capabilities, ImageAttachment } from "../../src/provider/gateway.ts";
import { FloretError } from "../../src/errors.ts";

const MEDIA_TYPES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);

/**
 * Returns the image attachments of a user message, validated.
 *
 * @param attachments the message's attachments
 * @param capabilities the gateway's capabilities; `images: false` rejects any image
 * @returns the images, in order
 * @throws {FloretError} `invalid_input` for an attachment that is not a well-formed
 *   image, or for any image when the model takes none
 */
export function userImages(
  attachments: unknown[] | undefined,
  capabilities: Capabilities,
): ImageAttachment[] {
  if (attachments === undefined || attachments.length === 0) return [];
  if (capabilities.images === false) {
    throw new FloretError(
      "invalid_input",
      "Model does not accept images: capabilities.images is false",
    );
  }
  return attachments.map((attachment, index) => {
    if (!isImage(attachment)) {
      throw new FloretError("invalid_input", `Attachment is not an image: index ${index}`);
    }
    if (!MEDIA_TYPES.has(attachment.mediaType)) {
      throw new FloretError(
        "invalid_input",
        `Image media type is not supported: ${attachment.mediaType}`,
      );
    }
    return attachment;
  });
}

function isImage(value: unknown): value is ImageAttachment {
  if (typeof value !== "object" || value === null) return false;
  const candidate = value as Record<string, unknown>;
  return candidate.type === "image" && typeof candidate.mediaType === "string" &&
    typeof candidate.dataBase64 === "string";
}

/**
 * A `data:` URL for an image, the form both OpenAI APIs take inline.
 *
 * @param image the image
 * @returns `data:<type>;base64,<bytes>`
 */
export function imageDataUrl(image: ImageAttachment): string {
  return `data:${image.mediaType};base64,${image.dataBase64}`;
}
