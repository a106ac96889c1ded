// WebP input is decoded like PNG and JPEG: lossy, lossless and extended
// (VP8X) files are read, shrunk and re-encoded; the size is read from the
// header before decoding; animations and broken files are refused.
// The images in tests/fixtures/images were made for these tests with
// imagescript's WebP encoder (and the VP8X one by hand from the VP8L one).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { Image } from "imagescript";
import { isFloretError } from "@floret/engine";
import { prepareModelImage } from "@floret/engine/images";

const fixture = (name: string): Uint8Array =>
  new Uint8Array(readFileSync(new URL(`./fixtures/images/${name}`, import.meta.url)));

async function pixels(bytes: Uint8Array): Promise<Image> {
  return await Image.decode(bytes);
}

function rgba(image: Image, x: number, y: number): number[] {
  return Image.colorToRGBA(image.getPixelAt(x + 1, y + 1));
}

async function rejects(promise: Promise<unknown>, message: RegExp): Promise<void> {
  await assert.rejects(promise, (error) => {
    assert.ok(isFloretError(error, "invalid_input"), String(error));
    assert.match((error as Error).message, message);
    return true;
  });
}

test("a lossless WebP is decoded exactly and re-encoded as PNG or JPEG", async () => {
  const prepared = await prepareModelImage(fixture("two-colours-6x4-lossless.webp"));
  assert.ok(["image/png", "image/jpeg"].includes(prepared.mediaType));
  assert.deepEqual(prepared.original, { width: 6, height: 4 });
  assert.deepEqual(prepared.model, { width: 6, height: 4 });
  if (prepared.mediaType === "image/png") {
    const image = await pixels(prepared.bytes);
    assert.deepEqual(rgba(image, 0, 0), [255, 0, 0, 255]);
    assert.deepEqual(rgba(image, 5, 3), [0, 0, 255, 255]);
  }
  assert.match(prepared.sourceSha256, /^[0-9a-f]{64}$/);
});

test("a lossy WebP is decoded, and shrunk to maxLongestSide", async () => {
  const small = await prepareModelImage(fixture("two-colours-6x4-lossy.webp"));
  assert.deepEqual(small.original, { width: 6, height: 4 });
  const big = await prepareModelImage(fixture("halves-300x100-lossy.webp"), {
    maxLongestSide: 150,
  });
  assert.deepEqual(big.original, { width: 300, height: 100 });
  assert.deepEqual(big.model, { width: 150, height: 50 });
  const image = await pixels(big.bytes);
  const [r1, , b1] = rgba(image, 10, 25);
  const [r2, , b2] = rgba(image, 140, 25);
  assert.ok(r1 > 180 && b1 < 80, `left is red: ${r1},${b1}`);
  assert.ok(b2 > 180 && r2 < 80, `right is blue: ${r2},${b2}`);
});

test("transparency survives: a WebP with alpha becomes PNG (simple and extended files)", async () => {
  for (const name of ["alpha-5x5-lossless.webp", "alpha-5x5-extended.webp"]) {
    const prepared = await prepareModelImage(fixture(name));
    assert.equal(prepared.mediaType, "image/png", name);
    const image = await pixels(prepared.bytes);
    assert.deepEqual(rgba(image, 0, 0), [0, 255, 0, 128], name);
    assert.deepEqual(rgba(image, 4, 4), [0, 255, 0, 255], name);
  }
});

test("the header's size is checked before decoding", async () => {
  const webp = fixture("halves-300x100-lossy.webp");
  await rejects(prepareModelImage(webp, { maxPixels: 300 * 100 - 1 }), /too many pixels: 300×100/);
  // An extended header claiming a 16384×16384 canvas.
  const claimed = fixture("alpha-5x5-extended.webp").slice();
  claimed.set([0xff, 0x3f, 0x00, 0xff, 0x3f, 0x00], 24);
  await rejects(prepareModelImage(claimed), /too many pixels: 16384×16384/);
});

test("animated, truncated and corrupt WebP files are refused", async () => {
  const animated = fixture("alpha-5x5-extended.webp").slice();
  animated[20] |= 0x02; // the VP8X animation flag
  await rejects(prepareModelImage(animated), /Animated WebP is not supported/);
  await rejects(
    prepareModelImage(fixture("two-colours-6x4-lossy.webp").subarray(0, 20)),
    /not recognised/,
  );
  const corrupt = fixture("halves-300x100-lossy.webp").slice();
  for (let at = 40; at < corrupt.length; at++) corrupt[at] = 0xa5;
  await rejects(prepareModelImage(corrupt), /could not be decoded: webp/);
});
