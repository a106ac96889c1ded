/**
 * Counts the frames of a GIF by walking its block structure, without
 * decoding pixels. This tells animated from static GIFs cheaply and catches
 * truncated files, which matters because animated GIFs are passed through
 * without ever being decoded.
 *
 * @module
 */

/** Skips a chain of data sub-blocks; returns the offset after the terminator or -1. */
function skipSubBlocks(bytes: Uint8Array, at: number): number {
  while (at < bytes.length) {
    const size = bytes[at];
    if (size === 0) return at + 1;
    at += 1 + size;
  }
  return -1;
}

function colorTableSize(packed: number): number {
  return (packed & 0x80) === 0 ? 0 : 3 * (1 << ((packed & 0x07) + 1));
}

/**
 * Counts image frames in a GIF.
 *
 * @param bytes a GIF file (header already checked)
 * @returns the number of frames, or `null` when the structure is broken or
 *   ends before the trailer
 */
export function countGifFrames(bytes: Uint8Array): number | null {
  if (bytes.length < 13) return null;
  let at = 13 + colorTableSize(bytes[10]);
  let frames = 0;
  while (at < bytes.length) {
    const introducer = bytes[at];
    if (introducer === 0x3b) return frames; // trailer
    if (introducer === 0x21) { // extension: label, then sub-blocks
      at = skipSubBlocks(bytes, at + 2);
    } else if (introducer === 0x2c) { // image descriptor
      if (at + 10 > bytes.length) return null;
      at += 10 + colorTableSize(bytes[at + 9]);
      at = skipSubBlocks(bytes, at + 1); // +1: LZW minimum code size
      frames++;
    } else {
      return null;
    }
    if (at < 0) return null;
  }
  return null;
}
