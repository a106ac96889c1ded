/**
 * Conformance cases for ordering and listing: tuple order across types and
 * awkward values, prefix and range selectors, reverse, limit and `after`.
 *
 * @module
 */

import { test } from "node:test";
import assert from "node:assert/strict";
import type { Arbitrary } from "fast-check";
import { loadFastCheck } from "./fast_check.ts";
import type { KvKey, KvKeyPart, KvStore } from "../src/spi/kv_store.ts";
import { bytes, compareKey, keysOf, type KvHarness, showKey } from "./kv_reference.ts";

const u8 = (...values: number[]): Uint8Array => new Uint8Array(values);

/** Keys in ascending tuple order, chosen to catch escaping, sign and type-tag mistakes. */
export const ORDERED_KEYS: readonly KvKey[] = [
  [u8()],
  [u8(0x00)],
  [u8(0x00), ""],
  [u8(0x00, 0x00)],
  [u8(0x00, 0xff)],
  [u8(0x01)],
  [u8(0xff)],
  [u8(0xff, 0x00)],
  [u8(0xff, 0xff)],
  [""],
  ["", ""],
  ["\u0000"],
  ["\u0000\u0000"],
  ["\u0000\u0001"],
  ["\u0001"],
  ["a"],
  ["a", u8()],
  ["a", ""],
  ["a", "b"],
  ["a", -1],
  ["a", 0n],
  ["a", false],
  ["a\u0000"],
  ["a\u0000b"],
  ["ab"],
  ["\u00e9"],
  ["\uffff"],
  ["\u{1f600}"],
  [-Infinity],
  [-Number.MAX_VALUE],
  [-1e300],
  [-1.5],
  [-1],
  [-Number.MIN_VALUE],
  [0],
  [Number.MIN_VALUE],
  [0.5],
  [1],
  [1, "x"],
  [2 ** 53],
  [Number.MAX_VALUE],
  [Infinity],
  [-(2n ** 200n)],
  [-(2n ** 64n)],
  [-256n],
  [-255n],
  [-1n],
  [0n],
  [1n],
  [255n],
  [256n],
  [2n ** 64n],
  [2n ** 200n],
  [false],
  [false, true],
  [true],
];

async function fill(store: KvStore, keys: readonly KvKey[]): Promise<void> {
  // Insert in a scrambled order so the store cannot pass by keeping insertion order.
  const scrambled = keys.map((key, i) => ({ key, i })).sort((a, b) =>
    ((a.i * 7919) % 101) - ((b.i * 7919) % 101)
  );
  for (const { key, i } of scrambled) {
    const result = await store.commit({ set: [{ key, value: bytes(String(i)) }] });
    assert.equal(result.ok, true);
  }
}

/**
 * Registers the ordering and listing cases.
 *
 * @param h the harness
 */
export function orderCases(h: KvHarness): void {
  const opts = { timeout: h.options.timeoutMs };

  test("the reference comparator agrees with the fixture order", () => {
    for (let i = 1; i < ORDERED_KEYS.length; i++) {
      const message = `${showKey(ORDERED_KEYS[i - 1])} < ${showKey(ORDERED_KEYS[i])}`;
      assert.ok(compareKey(ORDERED_KEYS[i - 1], ORDERED_KEYS[i]) < 0, message);
    }
  });

  test(
    "lists keys in tuple order across types and round-trips every part",
    opts,
    () =>
      h.withStore(async (store) => {
        await fill(store, ORDERED_KEYS);
        const all = await store.list({ prefix: [] });
        assert.deepEqual(keysOf(all), ORDERED_KEYS.map(showKey));
        assert.deepEqual(all.map((entry) => entry.key), ORDERED_KEYS);
        const back = await store.list({ prefix: [] }, { reverse: true });
        assert.deepEqual(keysOf(back), ORDERED_KEYS.map(showKey).reverse());
      }),
  );

  test("stores -0 as 0", opts, () =>
    h.withStore(async (store) => {
      await store.commit({ set: [{ key: ["n", -0], value: bytes("zero") }] });
      const [entry] = await store.getMany([["n", 0]]);
      assert.ok(entry);
      assert.ok(Object.is(entry.key[1], 0));
    }));

  test(
    "prefix lists only strictly longer keys that start with the prefix",
    opts,
    () =>
      h.withStore(async (store) => {
        const keys: KvKey[] = [["t", "a"], ["t", "a", 1], ["t", "a", "x", "y"], ["t", "a\u0000"], [
          "t",
          "ab",
        ], [
          "t",
          "b",
        ], ["u"]];
        await fill(store, keys);
        const under = await store.list({ prefix: ["t", "a"] });
        assert.deepEqual(keysOf(under), [showKey(["t", "a", "x", "y"]), showKey(["t", "a", 1])]);
        assert.equal((await store.list({ prefix: ["t"] })).length, 6);
        assert.equal((await store.list({ prefix: [] })).length, keys.length);
        assert.deepEqual(await store.list({ prefix: ["v"] }), []);
      }),
  );

  test(
    "start/end ranges are half-open, and limit 0 lists nothing",
    opts,
    () =>
      h.withStore(async (store) => {
        await fill(store, [["k", 1], ["k", 2], ["k", 3], ["k", 3, "child"], ["k", 4]]);
        const range = await store.list({ start: ["k", 2], end: ["k", 4] });
        assert.deepEqual(keysOf(range), [["k", 2], ["k", 3], ["k", 3, "child"]].map(showKey));
        const back = await store.list({ start: ["k", 2], end: ["k", 4] }, {
          reverse: true,
          limit: 2,
        });
        assert.deepEqual(keysOf(back), [["k", 3, "child"], ["k", 3]].map(showKey));
        assert.deepEqual(await store.list({ start: ["k", 4], end: ["k", 2] }), []);
        assert.deepEqual(await store.list({ prefix: ["k"] }, { limit: 0 }), []);
        assert.deepEqual(await store.list({ prefix: ["k"] }, { limit: 0, reverse: true }), []);
      }),
  );

  test(
    "after continues exclusively in the listing's direction",
    opts,
    () =>
      h.withStore(async (store) => {
        await fill(store, [["p", 1], ["p", 2], ["p", 2, "x"], ["p", 3]]);
        const forward = await store.list({ prefix: ["p"] }, { after: ["p", 2] });
        assert.deepEqual(keysOf(forward), [["p", 2, "x"], ["p", 3]].map(showKey));
        const backward = await store.list({ prefix: ["p"] }, {
          after: ["p", 2, "x"],
          reverse: true,
        });
        assert.deepEqual(keysOf(backward), [["p", 2], ["p", 1]].map(showKey));
        const outside = await store.list({ prefix: ["p"] }, { after: ["a"] });
        assert.equal(outside.length, 4);
      }),
  );

  test(
    "paging with small limits visits every key exactly once, both ways",
    opts,
    () =>
      h.withStore(async (store) => {
        const keys = ORDERED_KEYS.map((key): KvKey => ["page", ...key]);
        await fill(store, keys);
        for (const reverse of [false, true]) {
          for (const limit of [1, 2, 5]) {
            const seen: string[] = [];
            let after: KvKey | undefined;
            for (;;) {
              const page = await store.list({ prefix: ["page"] }, { limit, reverse, after });
              assert.ok(page.length <= limit);
              if (page.length === 0) break;
              seen.push(...keysOf(page));
              after = page[page.length - 1].key;
            }
            const expected = keys.map(showKey);
            assert.deepEqual(seen, reverse ? expected.reverse() : expected);
          }
        }
      }),
  );

  test("random keys of every type list in tuple order and round-trip", opts, async () => {
    const fc = await loadFastCheck();
    const anyPart: Arbitrary<KvKeyPart> = fc.oneof(
      fc.uint8Array({ maxLength: 4 }),
      fc.string({ unit: "binary", maxLength: 4 }),
      fc.double({ noNaN: true }),
      fc.bigInt({ min: -(2n ** 130n), max: 2n ** 130n }),
      fc.boolean(),
    );
    const keySet = fc.uniqueArray(fc.array(anyPart, { minLength: 1, maxLength: 3 }), {
      maxLength: 20,
      comparator: (a, b) => compareKey(a, b) === 0,
    });
    await fc.assert(
      fc.asyncProperty(keySet, (keys) =>
        h.withStore(async (store) => {
          await fill(store, keys);
          const listed = await store.list({ prefix: [] });
          const sorted = [...keys].sort(compareKey).map((key) =>
            key.map((p) => (Object.is(p, -0) ? 0 : p))
          );
          assert.deepEqual(listed.map((entry) => entry.key), sorted);
        })),
      { numRuns: Math.max(5, h.options.modelRuns) },
    );
  });
}
