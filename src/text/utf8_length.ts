/**
 * The UTF-8 size of a string, counted from its UTF-16 code units without
 * encoding it: live deltas, tool outputs and reports are measured on every
 * step, and an encoder would allocate a byte array each time only to read
 * its length. A lone surrogate counts 3 bytes, as its U+FFFD replacement
 * takes when encoded.
 *
 * @module
 */

/** UTF-8 byte length without allocating. */
export function utf8Length(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (code >= 0xd800 && code <= 0xdbff && isLowSurrogate(text.charCodeAt(i + 1))) {
      bytes += 4; // a pair: one code point above U+FFFF
      i++;
    } else bytes += 3;
  }
  return bytes;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff; // NaN past the end is not
}
