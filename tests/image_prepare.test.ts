import { test } from "node:test";
import assert from "node:assert/strict";
import { Frame, GIF, Image } from "imagescript";
import { isFloretError } from "@floret/engine";
import {
  DEFAULT_MAX_LONGEST_SIDE,
  prepareModelImage,
  toImageAttachment,
} from "@floret/engine/images";

const RED = 0xff0000ff;
const BLUE = 0x0000ffff;

/** Left half red, right half blue: makes rotations and flips visible. */
function halves(width: number, height: number): Image {
  const image = new Image(width, height);
  image.fill((x) => (x <= width / 2 ? RED : BLUE));
  return image;
}

/** Pixel of a decoded output as [r, g, b, a]; x and y are 0-based. */
async function pixel(bytes: Uint8Array, x: number, y: number): Promise<number[]> {
  const image = await Image.decode(bytes);
  return Image.colorToRGBA(image.getPixelAt(x + 1, y + 1));
}

function isReddish([r, , b]: number[]): boolean {
  return r > 180 && b < 80;
}

function isBluish([r, , b]: number[]): boolean {
  return b > 180 && r < 80;
}

/** An APP1 segment holding a big-endian TIFF with one IFD0 entry: Orientation. */
function exifOrientationSegment(orientation: number): Uint8Array {
  const tiff = [
    0x4d,
    0x4d,
    0x00,
    0x2a,
    0x00,
    0x00,
    0x00,
    0x08, // "MM", 42, IFD0 at offset 8
    0x00,
    0x01, // one entry
    0x01,
    0x12,
    0x00,
    0x03,
    0x00,
    0x00,
    0x00,
    0x01,
    0x00,
    orientation,
    0x00,
    0x00,
    0x00,
    0x00,
    0x00,
    0x00, // no next IFD
  ];
  const payload = [0x45, 0x78, 0x69, 0x66, 0x00, 0x00, ...tiff]; // "Exif\0\0"
  const length = payload.length + 2;
  return new Uint8Array([0xff, 0xe1, length >> 8, length & 0xff, ...payload]);
}

/** Splices an EXIF APP1 segment right after the JPEG's SOI marker. */
function withOrientation(jpeg: Uint8Array, orientation: number): Uint8Array {
  const segment = exifOrientationSegment(orientation);
  const out = new Uint8Array(jpeg.length + segment.length);
  out.set(jpeg.subarray(0, 2));
  out.set(segment, 2);
  out.set(jpeg.subarray(2), 2 + segment.length);
  return out;
}

async function rejects(promise: Promise<unknown>, pattern: RegExp): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(isFloretError(error, "invalid_input"), `not invalid_input: ${error}`);
    assert.match((error as Error).message, pattern);
    return true;
  });
}

test("a large PNG with transparency is shrunk and stays PNG with its alpha", async () => {
  const image = new Image(3000, 1000);
  image.fill((x) => (x <= 1500 ? 0x00ff0080 : 0x00000000));
  const prepared = await prepareModelImage(await image.encode());
  assert.equal(prepared.mediaType, "image/png");
  assert.deepEqual(prepared.original, { width: 3000, height: 1000 });
  assert.deepEqual(prepared.model, { width: DEFAULT_MAX_LONGEST_SIDE, height: 683 });
  const decoded = await Image.decode(prepared.bytes);
  assert.equal(decoded.width, DEFAULT_MAX_LONGEST_SIDE);
  assert.deepEqual(await pixel(prepared.bytes, 10, 10), [0, 255, 0, 128]);
  assert.equal((await pixel(prepared.bytes, 2000, 10))[3], 0);
});

test("an opaque noisy PNG becomes a smaller JPEG", async () => {
  const image = new Image(400, 300);
  image.fill(() => (Math.random() * 0xffffff << 8 | 0xff) >>> 0);
  const png = await image.encode();
  const prepared = await prepareModelImage(png, { maxLongestSide: 200 });
  assert.equal(prepared.mediaType, "image/jpeg");
  assert.deepEqual(prepared.model, { width: 200, height: 150 });
  assert.ok(prepared.bytes.length < png.length);
});

test("a JPEG within bounds stays JPEG at its size, re-encoded at the given quality", async () => {
  const jpeg = await halves(64, 32).encodeJPEG(95);
  const low = await prepareModelImage(jpeg, { quality: 10 });
  const high = await prepareModelImage(jpeg, { quality: 100 });
  assert.equal(low.mediaType, "image/jpeg");
  assert.deepEqual(low.model, { width: 64, height: 32 });
  assert.deepEqual(low.original, low.model);
  assert.ok(low.bytes.length < high.bytes.length);
});

test("JPEG EXIF orientation is applied", async () => {
  const jpeg = await halves(40, 20).encodeJPEG(95);
  const cases: [number, { width: number; height: number }, [number, number], [number, number]][] = [
    // orientation, upright size, a red pixel, a blue pixel
    [1, { width: 40, height: 20 }, [5, 10], [35, 10]],
    [2, { width: 40, height: 20 }, [35, 10], [5, 10]], // mirrored
    [3, { width: 40, height: 20 }, [35, 10], [5, 10]], // 180°
    [6, { width: 20, height: 40 }, [10, 5], [10, 35]], // 90° clockwise: left goes up
    [8, { width: 20, height: 40 }, [10, 35], [10, 5]], // 90° counter-clockwise: left goes down
  ];
  for (const [orientation, size, red, blue] of cases) {
    const prepared = await prepareModelImage(withOrientation(jpeg, orientation));
    assert.deepEqual(prepared.model, size, `orientation ${orientation}`);
    assert.deepEqual(prepared.original, size, `orientation ${orientation}`);
    assert.ok(isReddish(await pixel(prepared.bytes, ...red)), `orientation ${orientation} red`);
    assert.ok(isBluish(await pixel(prepared.bytes, ...blue)), `orientation ${orientation} blue`);
  }
});

test("a static GIF is decoded and re-encoded", async () => {
  const gif = await new GIF([Frame.from(halves(300, 100), 100)]).encode();
  const prepared = await prepareModelImage(gif, { maxLongestSide: 150 });
  assert.notEqual(prepared.mediaType, "image/gif");
  assert.deepEqual(prepared.model, { width: 150, height: 50 });
  assert.ok(isReddish(await pixel(prepared.bytes, 10, 25)));
});

test("an animated GIF within bounds passes through unchanged; over bounds it is refused", async () => {
  const frames = [Frame.from(halves(120, 60), 100), Frame.from(halves(120, 60).invert(), 100)];
  const gif = await new GIF(frames).encode();
  const prepared = await prepareModelImage(gif);
  assert.equal(prepared.mediaType, "image/gif");
  assert.deepEqual(prepared.bytes, gif);
  assert.deepEqual(prepared.model, { width: 120, height: 60 });
  await rejects(prepareModelImage(gif, { maxLongestSide: 100 }), /Animated GIF is too large/);
});

test("the source hash, the attachment and repeat runs are stable", async () => {
  const png = await halves(50, 50).encode();
  const first = await prepareModelImage(png);
  const second = await prepareModelImage(png);
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new Uint8Array(png)));
  const hex = Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
  assert.equal(first.sourceSha256, hex);
  assert.deepEqual(first.bytes, second.bytes);
  const attachment = toImageAttachment(first, "halves.png");
  assert.equal(attachment.type, "image");
  assert.equal(attachment.mediaType, first.mediaType);
  assert.equal(attachment.name, "halves.png");
  const decoded = Uint8Array.from(atob(attachment.dataBase64), (c) => c.charCodeAt(0));
  assert.deepEqual(decoded, first.bytes);
  assert.equal("name" in toImageAttachment(first), false);
});

test("truncated, random, unsupported and empty input is refused", async () => {
  const png = await halves(200, 100).encode();
  const jpeg = await halves(200, 100).encodeJPEG(90);
  const gif = await new GIF([Frame.from(halves(20, 20)), Frame.from(halves(20, 20))]).encode();
  const random = new Uint8Array(4096);
  for (let i = 0; i < random.length; i++) random[i] = (i * 2654435761) >>> 24;
  const webp = new TextEncoder().encode("RIFF\0\0\0\0WEBPVP8 ");
  await rejects(prepareModelImage(png.subarray(0, png.length >> 1)), /could not be decoded/);
  await rejects(prepareModelImage(png.subarray(0, 20)), /not recognised/);
  await rejects(prepareModelImage(jpeg.subarray(0, jpeg.length >> 1)), /could not be decoded/);
  await rejects(prepareModelImage(gif.subarray(0, gif.length - 8)), /truncated or malformed/);
  await rejects(prepareModelImage(random), /not recognised/);
  await rejects(prepareModelImage(webp), /not recognised/);
  await rejects(prepareModelImage(new Uint8Array(0)), /not recognised/);
});

test("input over maxSourceBytes or maxPixels, and bad options, are refused", async () => {
  const png = await halves(300, 200).encode();
  await rejects(prepareModelImage(png, { maxSourceBytes: png.length - 1 }), /too large/);
  await rejects(prepareModelImage(png, { maxPixels: 300 * 200 - 1 }), /too many pixels/);
  assert.deepEqual((await prepareModelImage(png, { maxPixels: 300 * 200 })).model, {
    width: 300,
    height: 200,
  });
  // A header claiming 100000×100000 is refused before any pixel is decoded.
  const bomb = png.slice(0, 64);
  new DataView(bomb.buffer).setUint32(16, 100_000);
  new DataView(bomb.buffer).setUint32(20, 100_000);
  await rejects(prepareModelImage(bomb), /too many pixels: 100000×100000/);
  await rejects(prepareModelImage(png, { quality: 0 }), /quality/);
  await rejects(prepareModelImage(png, { quality: 101 }), /quality/);
  await rejects(prepareModelImage(png, { maxLongestSide: 1.5 }), /maxLongestSide/);
  await rejects(prepareModelImage(png, { maxSourceBytes: -1 }), /maxSourceBytes/);
});
