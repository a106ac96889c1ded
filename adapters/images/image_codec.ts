/**
 * The imagescript boundary: decoding to an RGBA bitmap and encoding the
 * output. Decoding failures become `FloretError("invalid_input")`.
 *
 * imagescript's npm entry loads a native N-API addon for its JPEG encoder
 * when it is first imported (`codecs/node/bin/<arch>-<platform>.node`; its
 * WebAssembly fallback is an unfinished stub). On Deno that needs
 * `--allow-ffi` (plus `--allow-env` and `--allow-read` for its WebAssembly
 * decoders), and platforms without a prebuilt binary cannot load it at
 * all. It is therefore imported lazily (it is also an optional peer), so
 * importing this entry point never fails and the cause is reported at the
 * first use.
 *
 * @module
 */

import type { JPEGQuality } from "imagescript";
import { FloretError } from "../../src/errors.ts";
import { optionalPeer } from "../../src/optional_peer.ts";
import type { Bitmap } from "./exif_orientation.ts";

type ImageScript = typeof import("imagescript");
type Image = InstanceType<ImageScript["Image"]>;

// Also an optional peer: a host that never prepares images need not install it.
const loadImageScript = optionalPeer<ImageScript>({
  package: "imagescript",
  entry: "@floret/engine/images",
  load: () => import("imagescript"),
  hint: "it needs its native addon (on Deno, grant --allow-read, --allow-env and --allow-ffi)",
});

/** Highest deflate level: upload size and journal size matter more than encode time. */
const PNG_COMPRESSION = 9;

/**
 * Decodes PNG, JPEG or the first frame of a GIF.
 *
 * @param bytes the encoded image
 * @param format the sniffed format
 * @returns the RGBA pixels
 * @throws {FloretError} `invalid_input` when the data cannot be decoded
 * @throws {Error} when imagescript itself cannot load
 */
export async function decodeBitmap(
  bytes: Uint8Array,
  format: "png" | "jpeg" | "gif",
): Promise<Bitmap> {
  const { GIF, Image } = await loadImageScript();
  try {
    const image = format === "gif" ? (await GIF.decode(bytes, true))[0] : await Image.decode(bytes);
    if (image === undefined) throw new Error("no frame decoded");
    return { width: image.width, height: image.height, data: image.bitmap };
  } catch (error) {
    throw new FloretError("invalid_input", `Image could not be decoded: ${format}`, {
      cause: error,
    });
  }
}

function isOpaque(bitmap: Bitmap): boolean {
  const { data } = bitmap;
  for (let at = 3; at < data.length; at += 4) if (data[at] !== 255) return false;
  return true;
}

async function toImage(bitmap: Bitmap): Promise<Image> {
  const { Image } = await loadImageScript();
  const image = new Image(bitmap.width, bitmap.height);
  image.bitmap.set(bitmap.data);
  return image;
}

/**
 * Encodes the output (`quality` is validated to 1–100 by the caller): JPEG when the source was JPEG, PNG when there is any
 * transparency, otherwise the smaller of PNG and JPEG.
 *
 * @param bitmap the final pixels
 * @param options `jpegOnly` for JPEG sources; `quality` for JPEG
 * @returns the bytes and their media type
 */
export async function encodeBest(
  bitmap: Bitmap,
  options: { jpegOnly: boolean; quality: number },
): Promise<{ bytes: Uint8Array; mediaType: "image/png" | "image/jpeg" }> {
  const image = await toImage(bitmap);
  const jpeg = async () => ({
    bytes: new Uint8Array(await image.encodeJPEG(options.quality as JPEGQuality)),
    mediaType: "image/jpeg" as const,
  });
  if (options.jpegOnly) return await jpeg();
  // A fixed creation time and no software tag keep the output deterministic.
  const png = {
    bytes: new Uint8Array(
      await image.encode(PNG_COMPRESSION, { creationTime: 0, software: "" }),
    ),
    mediaType: "image/png" as const,
  };
  if (!isOpaque(bitmap)) return png;
  const candidate = await jpeg();
  return candidate.bytes.length < png.bytes.length ? candidate : png;
}
