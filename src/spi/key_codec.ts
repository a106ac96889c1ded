/**
 * Key tuples to bytes and back. The encoding is order-preserving: comparing
 * two encoded keys byte by byte (memcmp) gives the same answer as comparing
 * the tuples, so a sorted array or a SQL `BLOB PRIMARY KEY` yields range
 * scans for free. Every encoded part is self-delimiting and no part's
 * encoding is a proper prefix of another's, which is what lets a prefix of
 * bytes stand for a prefix of parts.
 *
 * @module
 */

import { FloretError } from "../errors.ts";
import type { KvKey, KvKeyPart } from "./kv_store.ts";

// Type tags, ascending in the Deno KV type order: bytes < string < number < bigint < boolean.
const TAG_BYTES = 0x01;
const TAG_STRING = 0x02;
const TAG_NUMBER = 0x10;
const TAG_BIGINT = 0x20;
const TAG_FALSE = 0x30;
const TAG_TRUE = 0x31;
// 0x00 inside bytes/strings becomes 0x00 0xFF, and 0x00 alone ends the part: the
// end marker then sorts below every continuation, so "a" < "a\0" < "ab".
const ESCAPE = 0xff;

const utf8 = new TextEncoder();
const strictUtf8 = new TextDecoder("utf-8", { fatal: true });
const loneSurrogate = /[\uD800-\uDFFF]/u;

/** Thrown for keys the store cannot hold; the message names the offending part. */
function invalid(detail: string): FloretError {
  return new FloretError("invalid_input", `Invalid key: ${detail}`);
}

class ByteWriter {
  #buffer = new Uint8Array(64);
  #length = 0;

  push(byte: number): void {
    if (this.#length === this.#buffer.length) this.#grow(1);
    this.#buffer[this.#length++] = byte;
  }

  append(bytes: Uint8Array): void {
    if (this.#length + bytes.length > this.#buffer.length) this.#grow(bytes.length);
    this.#buffer.set(bytes, this.#length);
    this.#length += bytes.length;
  }

  result(): Uint8Array {
    return this.#buffer.slice(0, this.#length);
  }

  /** Starts a new key in the same buffer (the encoder reuses one writer). */
  reset(): void {
    this.#length = 0;
  }

  #grow(extra: number): void {
    const next = new Uint8Array(Math.max(this.#buffer.length * 2, this.#length + extra));
    next.set(this.#buffer.subarray(0, this.#length));
    this.#buffer = next;
  }
}

function writeEscaped(out: ByteWriter, bytes: Uint8Array): void {
  for (const byte of bytes) {
    out.push(byte);
    if (byte === 0x00) out.push(ESCAPE);
  }
  out.push(0x00);
}

// IEEE 754 bits made sortable: negatives have every bit flipped (larger
// magnitude sorts lower), non-negatives only the sign bit.
// One scratch buffer serves every number: encoding is synchronous and
// append() copies it, so no key needs its own DataView.
const numberView = new DataView(new ArrayBuffer(8));
const numberBytes = new Uint8Array(numberView.buffer);

/** The scratch buffer, holding the sortable bytes of `value` until the next call. */
function sortableNumber(value: number): Uint8Array {
  numberView.setFloat64(0, value === 0 ? 0 : value);
  const bytes = numberBytes;
  if (bytes[0] & 0x80) { for (let i = 0; i < 8; i++) bytes[i] ^= 0xff; }
  else bytes[0] ^= 0x80;
  return bytes;
}

function writeNumber(out: ByteWriter, value: number): void {
  out.append(sortableNumber(value));
}

function magnitudeBytes(value: bigint): Uint8Array {
  let hex = value.toString(16);
  if (value === 0n) return new Uint8Array(0);
  if (hex.length % 2) hex = "0" + hex;
  const bytes = new Uint8Array(hex.length / 2);
  for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return bytes;
}

// Sign byte, then the magnitude's byte length (itself length-prefixed), then
// the magnitude: longer magnitudes are larger, equal lengths compare bytewise.
// Negative values store everything after the sign byte complemented, which
// reverses their order as it must.
function writeBigint(out: ByteWriter, value: bigint): void {
  const negative = value < 0n;
  const magnitude = magnitudeBytes(negative ? -value : value);
  const length = magnitudeBytes(BigInt(magnitude.length));
  const body = new Uint8Array(1 + length.length + magnitude.length);
  body[0] = length.length;
  body.set(length, 1);
  body.set(magnitude, 1 + length.length);
  if (negative) { for (let i = 0; i < body.length; i++) body[i] ^= 0xff; }
  out.push(negative ? 0x00 : 0x01);
  out.append(body);
}

function writePart(out: ByteWriter, part: KvKeyPart, index: number): void {
  if (part instanceof Uint8Array) {
    out.push(TAG_BYTES);
    writeEscaped(out, part);
  } else if (typeof part === "string") {
    out.append(encodedString(part, index));
  } else if (typeof part === "number") {
    if (Number.isNaN(part)) throw invalid(`part ${index} is NaN`);
    out.push(TAG_NUMBER);
    writeNumber(out, part);
  } else if (typeof part === "bigint") {
    out.push(TAG_BIGINT);
    writeBigint(out, part);
  } else if (typeof part === "boolean") {
    out.push(part ? TAG_TRUE : TAG_FALSE);
  } else {
    throw invalid(`part ${index} has unsupported type ${part === null ? "null" : typeof part}`);
  }
}

/**
 * Encodes a key tuple to order-preserving bytes.
 *
 * @param key the tuple; must be an array (it may be empty only when `allowEmpty`)
 * @param allowEmpty whether `[]` is acceptable (selectors yes, stored keys no)
 * @returns a fresh byte array; memcmp order of results equals tuple order
 * @throws {FloretError} `invalid_input` for NaN, lone surrogates, unsupported part types
 * @example
 * ```ts
 * import { encodeKey } from "@floret/engine/spi";
 * encodeKey(["thread", 1n, true]);
 * ```
 */
export function encodeKey(key: KvKey, allowEmpty = false): Uint8Array {
  if (!Array.isArray(key)) throw invalid("a key must be an array of parts");
  if (key.length === 0 && !allowEmpty) throw invalid("a key needs at least one part");
  // A key that is a Proxy could call back in here from a getter: such a call gets its own writer.
  const out = encoding ? new ByteWriter() : shared;
  const outer = !encoding;
  encoding = true;
  try {
    out.reset();
    for (let index = 0; index < key.length; index++) writePart(out, key[index], index);
    return out.result();
  } finally {
    if (outer) encoding = false;
  }
}

/**
 * `encodeKey([...parts, last])` from `encodeKey(parts)` and a number: the
 * encoding is the parts' bytes followed by the number's, so a caller that
 * keeps a prefix's bytes (a thread's entries) skips re-encoding its strings.
 * Internal (not in the SPI).
 *
 * @param prefix what `encodeKey` returned for the leading parts
 * @param last the final part, a number
 * @returns fresh bytes, equal to encoding the whole tuple
 * @throws {FloretError} `invalid_input` for NaN, as `encodeKey` does
 */
export function encodeKeyWithNumber(prefix: Uint8Array, last: number): Uint8Array {
  if (Number.isNaN(last)) throw invalid(`part ${decodeKey(prefix).length} is NaN`);
  const out = new Uint8Array(prefix.length + 9);
  out.set(prefix);
  out[prefix.length] = TAG_NUMBER;
  out.set(sortableNumber(last), prefix.length + 1);
  return out;
}

/**
 * The binary string (one char per byte, as `bytesToMapKey` makes) of a
 * number part's encoding: what {@link encodeKeyWithNumber} appends to the
 * prefix, without making the key's bytes. Internal (not in the SPI): the
 * journal's entry ids, its cached prefix id followed by this.
 *
 * @param value the number
 * @returns 9 chars: the number tag and the 8 sortable bytes
 * @throws {FloretError} `invalid_input` for NaN, as `encodeKey` does
 */
export function numberPartString(value: number): string {
  if (Number.isNaN(value)) throw invalid("a number part is NaN");
  const b = sortableNumber(value);
  return String.fromCharCode(TAG_NUMBER, b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]);
}

// encodeKey never yields, so one writer serves every call; result() copies out.
const shared = new ByteWriter();
let encoding = false;

// The same few strings head most keys ("entry", a thread's id), so their
// encoded form (tag, escaped UTF-8, terminator) is kept. Bounded: the cache is
// dropped whole when full, which costs one re-encode per string.
const STRING_CACHE_LIMIT = 4096;
const stringCache = new Map<string, Uint8Array>();

/** The full encoding of one string part; throws for lone surrogates (never cached). */
function encodedString(part: string, index: number): Uint8Array {
  const cached = stringCache.get(part);
  if (cached) return cached;
  const encoded = plainAsciiEncoding(part) ?? escapedEncoding(part, index);
  if (stringCache.size >= STRING_CACHE_LIMIT) stringCache.clear();
  stringCache.set(part, encoded);
  return encoded;
}

/**
 * The encoding of an ASCII string without NUL (every id and key word the
 * engine makes), written straight into its final buffer: such a string has
 * no surrogate to refuse, no byte to escape and needs no TextEncoder.
 * Undefined for any other string.
 */
function plainAsciiEncoding(part: string): Uint8Array | undefined {
  // Tag, one byte per char, and the terminator (the buffer's last byte, already 0).
  const out = new Uint8Array(part.length + 2);
  out[0] = TAG_STRING;
  for (let i = 0; i < part.length; i++) {
    const code = part.charCodeAt(i);
    if (code === 0 || code > 0x7f) return undefined;
    out[i + 1] = code;
  }
  return out;
}

/** The encoding of any other string: UTF-8 with NUL escaped; throws for lone surrogates. */
function escapedEncoding(part: string, index: number): Uint8Array {
  if (loneSurrogate.test(part)) throw invalid(`part ${index} has a lone surrogate`);
  const out = new ByteWriter();
  out.push(TAG_STRING);
  writeEscaped(out, utf8.encode(part));
  return out.result();
}

class ByteReader {
  position = 0;
  constructor(readonly bytes: Uint8Array) {}

  next(): number {
    if (this.position >= this.bytes.length) throw invalid("encoded key is truncated");
    return this.bytes[this.position++];
  }

  take(count: number): Uint8Array {
    if (this.position + count > this.bytes.length) throw invalid("encoded key is truncated");
    const out = this.bytes.slice(this.position, this.position + count);
    this.position += count;
    return out;
  }

  unescape(): Uint8Array {
    const out = new ByteWriter();
    for (;;) {
      const byte = this.next();
      if (byte !== 0x00) out.push(byte);
      else if (this.bytes[this.position] === ESCAPE) {
        this.position++;
        out.push(0x00);
      } else return out.result();
    }
  }
}

function bigintFrom(bytes: Uint8Array): bigint {
  let value = 0n;
  for (const byte of bytes) value = (value << 8n) | BigInt(byte);
  return value;
}

function readBigint(reader: ByteReader): bigint {
  const negative = reader.next() === 0x00;
  const flip = (bytes: Uint8Array): Uint8Array => negative ? bytes.map((b) => b ^ 0xff) : bytes;
  const lengthOfLength = flip(reader.take(1))[0];
  const length = Number(bigintFrom(flip(reader.take(lengthOfLength))));
  const magnitude = bigintFrom(flip(reader.take(length)));
  return negative ? -magnitude : magnitude;
}

function readNumber(reader: ByteReader): number {
  const bytes = reader.take(8);
  if (bytes[0] & 0x80) bytes[0] ^= 0x80;
  else for (let i = 0; i < 8; i++) bytes[i] ^= 0xff;
  return new DataView(bytes.buffer).getFloat64(0);
}

function readPart(reader: ByteReader): KvKeyPart {
  const tag = reader.next();
  switch (tag) {
    case TAG_BYTES:
      return reader.unescape();
    case TAG_STRING:
      try {
        return strictUtf8.decode(reader.unescape());
      } catch {
        throw invalid("encoded string is not UTF-8");
      }
    case TAG_NUMBER:
      return readNumber(reader);
    case TAG_BIGINT:
      return readBigint(reader);
    case TAG_FALSE:
      return false;
    case TAG_TRUE:
      return true;
    default:
      throw invalid(`unknown type tag 0x${tag.toString(16)}`);
  }
}

/**
 * Decodes bytes produced by {@link encodeKey} back into a tuple.
 *
 * @param bytes an encoded key
 * @returns the tuple; byte parts are fresh copies
 * @throws {FloretError} `invalid_input` when the bytes are not a valid encoding
 * @example
 * ```ts
 * import { decodeKey, encodeKey } from "@floret/engine/spi";
 * decodeKey(encodeKey(["a", 1])); // ["a", 1]
 * ```
 */
export function decodeKey(bytes: Uint8Array): KvKeyPart[] {
  const reader = new ByteReader(bytes);
  const parts: KvKeyPart[] = [];
  while (reader.position < bytes.length) parts.push(readPart(reader));
  return parts;
}
