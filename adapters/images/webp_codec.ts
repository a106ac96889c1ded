/**
 * WebP decoding on `@jsquash/webp` (libwebp compiled to WebAssembly, from
 * the Squoosh app), an optional peer loaded at the first WebP. imagescript
 * encodes WebP but cannot decode it.
 *
 * The package fetches its `.wasm` file by URL, which Node's fetch cannot do
 * for `file:` URLs; so the bytes are read from the installed package and
 * compiled here, the same way on Node, Bun and Deno (Deno needs read
 * permission for node_modules). On Node and Bun the package defines a
 * minimal global `ImageData` when there is none.
 *
 * @module
 */
import { FloretError } from "../../src/errors.ts";
import { optionalPeer } from "../../src/optional_peer.ts";
import type { Bitmap } from "./exif_orientation.ts";

interface WebpDecoder {
  decode(buffer: ArrayBuffer): Promise<{ width: number; height: number; data: Uint8ClampedArray }>;
}

const DECODER = "@jsquash/webp/decode.js";

const loadWebp = optionalPeer<WebpDecoder>({
  package: "@jsquash/webp",
  entry: "@floret/engine/images (WebP input)",
  load: async () => {
    const module = await import("@jsquash/webp/decode.js") as unknown as {
      default: WebpDecoder["decode"];
      init(module: WebAssembly.Module): Promise<void>;
    };
    const { readFile } = await import("node:fs/promises");
    const wasm = new URL("./codec/dec/webp_dec.wasm", import.meta.resolve(DECODER));
    await module.init(await WebAssembly.compile(await readFile(wasm)));
    return { decode: module.default };
  },
  hint: "on Deno, grant --allow-read for node_modules",
});

/**
 * Decodes a still WebP image (lossy, lossless, with or without alpha).
 *
 * @param bytes the encoded image
 * @returns the RGBA pixels
 * @throws {FloretError} `invalid_input` when the data cannot be decoded
 * @throws {Error} when `@jsquash/webp` cannot load
 */
export async function decodeWebp(bytes: Uint8Array): Promise<Bitmap> {
  const { decode } = await loadWebp();
  try {
    // The decoder takes an ArrayBuffer of exactly the image.
    const buffer = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
    const image = await decode(buffer as ArrayBuffer);
    const data = new Uint8Array(image.data.buffer, image.data.byteOffset, image.data.byteLength);
    return { width: image.width, height: image.height, data };
  } catch (error) {
    throw new FloretError("invalid_input", "Image could not be decoded: webp", { cause: error });
  }
}
