// The key codec's fast paths (a cache of encoded string parts, an ASCII path
// without TextEncoder, one reused writer) and the commit plan's pairwise
// duplicate check must give exactly the bytes and errors of the plain codec.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  compareBytes,
  decodeKey,
  encodeKey,
  formatVersion,
  isFloretError,
  planCommit,
} from "@floret/engine/spi";
import { newId } from "../src/identity/ids.ts";
import { encodeKeyWithNumber } from "../src/spi/key_codec.ts";

/** The string part's encoding by the format's definition: tag, escaped UTF-8, terminator. */
function reference(part: string): number[] {
  const out = [0x02];
  for (const byte of new TextEncoder().encode(part)) {
    out.push(byte);
    if (byte === 0) out.push(0xff);
  }
  out.push(0x00);
  return out;
}

function isInvalid(error: unknown): boolean {
  return isFloretError(error) && error.code === "invalid_input";
}

test("string parts encode to the defined bytes, cached or not", () => {
  const parts = [
    "entry",
    "thread_01abc",
    "",
    "a\u0000b",
    "\u0000",
    "\u007f~",
    "abcé",
    "é",
    "日本",
    "😀",
    "x".repeat(300),
  ];
  for (let round = 0; round < 3; round++) {
    for (const part of parts) {
      assert.deepEqual([...encodeKey([part])], reference(part), JSON.stringify(part));
      assert.deepEqual(decodeKey(encodeKey([part, 7])), [part, 7]);
    }
  }
});

test("a caller mutating an encoded key changes no later encoding", () => {
  const first = encodeKey(["entry", "t1", 3]);
  first.fill(0);
  assert.deepEqual(decodeKey(encodeKey(["entry", "t1", 3])), ["entry", "t1", 3]);
});

test("more distinct strings than the cache holds still encode correctly", () => {
  for (let i = 0; i < 5000; i++) {
    const part = `thread_${i}`;
    assert.deepEqual([...encodeKey([part])], reference(part));
  }
  assert.deepEqual(decodeKey(encodeKey(["thread_1", 1])), ["thread_1", 1]);
});

test("a lone surrogate is refused every time, before and after good strings", () => {
  for (let round = 0; round < 2; round++) {
    assert.throws(() => encodeKey(["ok", "a\uD800"]), isInvalid);
    assert.deepEqual(decodeKey(encodeKey(["ok"])), ["ok"]);
  }
});

test("numbers encode in order with the shared scratch buffer", () => {
  const values = [-Infinity, -1e9, -1, -0, 0, 1e-9, 1, 2, 1e9, Infinity];
  const encoded = values.map((value) => encodeKey(["n", value]));
  for (let i = 1; i < encoded.length; i++) {
    assert.ok(compareBytes(encoded[i - 1], encoded[i]) <= 0, `${values[i - 1]} <= ${values[i]}`);
  }
  assert.deepEqual(decodeKey(encoded[7]), ["n", 2]);
});

test("a key whose getter encodes another key gets both right", () => {
  const inner = ["inner", 1];
  const key = new Proxy(["outer", "x", 2], {
    get(target, property, receiver) {
      if (property === "1") encodeKey(inner);
      return Reflect.get(target, property, receiver);
    },
  });
  assert.deepEqual(decodeKey(encodeKey(key)), ["outer", "x", 2]);
  assert.deepEqual(decodeKey(encodeKey(inner)), ["inner", 1]);
});

test("a key written twice is refused in small and large commits", () => {
  const value = new Uint8Array([1]);
  assert.throws(
    () => planCommit({ set: [{ key: ["a", 1], value }], delete: [["a", 1]] }),
    isInvalid,
  );
  const many = Array.from({ length: 40 }, (_, i) => ({ key: ["k", i], value }));
  assert.equal(planCommit({ set: many }).writes.length, 40);
  assert.throws(() => planCommit({ set: [...many, { key: ["k", 39], value }] }), isInvalid);
  assert.throws(() => planCommit({ set: many, delete: [["k", 0]] }), isInvalid);
});

test("ids drawn from the random pool are distinct and well formed", () => {
  const seen = new Set<string>();
  for (let i = 0; i < 2000; i++) {
    const id = newId("run");
    assert.match(id, /^run_[0-9a-hjkmnp-tv-z]{21}$/);
    seen.add(id.slice(-8));
  }
  // 2,000 random 40-bit tails: a repeat would mean the pool hands out bytes twice.
  assert.equal(seen.size, 2000);
});

test("a prefix's bytes extended by a number equal the whole tuple's encoding", () => {
  const numbers = [0, -0, 1, 2, 255, 256, 1e9, 2 ** 53, -1, -1e-9, 0.5, Infinity, -Infinity];
  for (const prefix of [["entry", "thread_01abc"], ["x"], ["é", 3, "a\u0000b"]]) {
    const bytes = encodeKey(prefix);
    for (const n of numbers) {
      assert.deepEqual(encodeKeyWithNumber(bytes, n), encodeKey([...prefix, n]), `${prefix} ${n}`);
    }
    // The prefix is read, never changed, and each result is its own buffer.
    assert.deepEqual(bytes, encodeKey(prefix));
    assert.notEqual(encodeKeyWithNumber(bytes, 1), encodeKeyWithNumber(bytes, 1));
    assert.throws(() => encodeKeyWithNumber(bytes, NaN), isInvalid);
  }
});

test("versions are the counter in 20 zero-padded digits, whatever the counter's type", () => {
  const reference = (counter: number | bigint): string => counter.toString().padStart(20, "0");
  const counters = [0, 1, 9, 10, 99, 100, 123_456_789, 2 ** 31, 2 ** 32 + 7, 1e15, 2 ** 53 - 1];
  for (let i = 0; i < 1000; i++) counters.push(Math.floor(Math.random() * 2 ** 53));
  for (const counter of counters) {
    assert.equal(formatVersion(counter), reference(counter));
    assert.equal(formatVersion(BigInt(counter)), reference(counter));
  }
  assert.equal(formatVersion(2n ** 64n - 1n), "18446744073709551615");
  // Versions compare like their counters.
  assert.ok(formatVersion(9) < formatVersion(10));
  assert.ok(formatVersion(2 ** 53 - 2) < formatVersion(2 ** 53 - 1));
});
