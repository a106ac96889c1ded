/**
 * Conformance cases for writes: check semantics, atomicity, versions, racing
 * committers, value copies, large values, invalid input, close and reopen.
 *
 * @module
 */

import { test } from "node:test";
import assert from "node:assert/strict";
import { isFloretError } from "../src/errors.ts";
import type { KvKey, KvStore } from "../src/spi/kv_store.ts";
import { bytes, keysOf, type KvHarness, showKey } from "./kv_reference.ts";

async function set(store: KvStore, key: KvKey, text: string): Promise<string> {
  const result = await store.commit({ set: [{ key, value: bytes(text) }] });
  assert.ok(result.ok, `set ${showKey(key)}`);
  return result.version;
}

async function text(store: KvStore, key: KvKey): Promise<string | null> {
  const [entry] = await store.getMany([key]);
  return entry ? new TextDecoder().decode(entry.value) : null;
}

const invalidInput = (error: unknown): boolean => isFloretError(error, "invalid_input");

/**
 * Registers the write-path cases.
 *
 * @param h the harness
 */
export function commitCases(h: KvHarness): void {
  const opts = { timeout: h.options.timeoutMs };

  test(
    "getMany returns entries in request order and null for missing keys",
    opts,
    () =>
      h.withStore(async (store) => {
        const version = await set(store, ["a"], "A");
        const got = await store.getMany([["missing"], ["a"], ["a"]]);
        assert.deepEqual(keysOf(got), ["null", showKey(["a"]), showKey(["a"])]);
        assert.equal(got[1]?.version, version);
        assert.deepEqual(await store.getMany([]), []);
      }),
  );

  test(
    "versions grow with every commit and are shared within one",
    opts,
    () =>
      h.withStore(async (store) => {
        const first = await store.commit({
          set: [{ key: ["x"], value: bytes("1") }, { key: ["y"], value: bytes("1") }],
        });
        const second = await store.commit({ set: [{ key: ["x"], value: bytes("2") }] });
        assert.ok(first.ok && second.ok);
        assert.equal(typeof first.version, "string");
        assert.ok(second.version > first.version, `${second.version} > ${first.version}`);
        assert.equal(second.version.length, first.version.length);
        const [x, y] = await store.getMany([["x"], ["y"]]);
        assert.equal(x?.version, second.version);
        assert.equal(y?.version, first.version);
      }),
  );

  test(
    "checks: null means absent, a current version passes, a stale one fails",
    opts,
    () =>
      h.withStore(async (store) => {
        assert.deepEqual(
          await store.commit({
            checks: [{ key: ["c"], version: null }],
            set: [{ key: ["c"], value: bytes("1") }],
          }).then((r) => r.ok),
          true,
        );
        assert.deepEqual(
          await store.commit({
            checks: [{ key: ["c"], version: null }],
            set: [{ key: ["c"], value: bytes("2") }],
          }),
          { ok: false },
        );
        const [entry] = await store.getMany([["c"]]);
        assert.ok(entry);
        const next = await store.commit({
          checks: [{ key: ["c"], version: entry.version }],
          set: [{ key: ["c"], value: bytes("3") }],
        });
        assert.ok(next.ok);
        assert.deepEqual(
          await store.commit({ checks: [{ key: ["c"], version: entry.version }], delete: [["c"]] }),
          { ok: false },
        );
        assert.deepEqual(
          await store.commit({ checks: [{ key: ["gone"], version: entry.version }] }),
          { ok: false },
        );
        assert.equal(await text(store, ["c"]), "3");
        const removed = await store.commit({
          checks: [{ key: ["c"], version: next.version }],
          delete: [["c"], ["never"]],
        });
        assert.ok(removed.ok);
        assert.equal(await text(store, ["c"]), null);
      }),
  );

  test("a failed check writes nothing", opts, () =>
    h.withStore(async (store) => {
      const version = await set(store, ["keep"], "old");
      await set(store, ["other"], "x");
      const result = await store.commit({
        checks: [{ key: ["keep"], version }, { key: ["other"], version: null }],
        set: [{ key: ["keep"], value: bytes("new") }, { key: ["fresh"], value: bytes("f") }],
        delete: [["other"]],
      });
      assert.deepEqual(result, { ok: false });
      assert.equal(await text(store, ["keep"]), "old");
      assert.equal(await text(store, ["fresh"]), null);
      assert.equal(await text(store, ["other"]), "x");
    }));

  test(
    "of 20 racing committers on one version exactly one wins",
    opts,
    () =>
      h.withStore(async (store) => {
        const version = await set(store, ["race"], "start");
        const results = await Promise.all(Array.from({ length: 20 }, (_, i) =>
          store.commit({
            checks: [{ key: ["race"], version }],
            set: [{ key: ["race"], value: bytes(`winner ${i}`) }, {
              key: ["race", i],
              value: bytes("mark"),
            }],
          })));
        const winners = results.flatMap((result, i) => (result.ok ? [i] : []));
        assert.equal(winners.length, 1);
        assert.equal(await text(store, ["race"]), `winner ${winners[0]}`);
        assert.deepEqual(keysOf(await store.list({ prefix: ["race"] })), [
          showKey(["race", winners[0]]),
        ]);
      }),
  );

  test("values are copied in and out", opts, () =>
    h.withStore(async (store) => {
      const value = bytes("abc");
      await store.commit({ set: [{ key: ["copy"], value }] });
      value[0] = 0x7a;
      const [first] = await store.getMany([["copy"]]);
      assert.ok(first);
      first.value[1] = 0x7a;
      assert.equal(await text(store, ["copy"]), "abc");
    }));

  test("large values round-trip", opts, () =>
    h.withStore(async (store) => {
      const large = new Uint8Array(h.options.largeValueBytes);
      for (let i = 0; i < large.length; i += 4093) large[i] = i % 251;
      large[large.length - 1] = 0xff;
      await store.commit({ set: [{ key: ["large"], value: large }] });
      const [entry] = await store.getMany([["large"]]);
      assert.ok(entry);
      assert.equal(entry.value.length, large.length);
      assert.ok(entry.value.every((byte, i) => byte === large[i]));
    }));

  test(
    "invalid keys and options fail with invalid_input and write nothing",
    opts,
    () =>
      h.withStore(async (store) => {
        const value = bytes("v");
        const badKeys = [[NaN], [], ["ok", NaN], [null], [undefined], [{}], [Symbol("s")], [
          "\ud800",
        ]] as unknown as KvKey[];
        for (const key of badKeys) {
          await assert.rejects(
            store.commit({ set: [{ key: ["fine"], value }, { key, value }] }),
            invalidInput,
            showKey(["fine"]),
          );
          await assert.rejects(store.getMany([key]), invalidInput);
          await assert.rejects(store.commit({ delete: [key] }), invalidInput);
          await assert.rejects(store.commit({ checks: [{ key, version: null }] }), invalidInput);
        }
        await assert.rejects(
          store.commit({ set: [{ key: ["v"], value: "text" as unknown as Uint8Array }] }),
          invalidInput,
        );
        await assert.rejects(
          store.commit({ set: [{ key: ["d"], value }], delete: [["d"]] }),
          invalidInput,
        );
        await assert.rejects(store.list({ prefix: [NaN] }), invalidInput);
        await assert.rejects(store.list({ prefix: [] }, { limit: -1 }), invalidInput);
        await assert.rejects(store.list({ prefix: [] }, { limit: 1.5 }), invalidInput);
        await assert.rejects(store.list({ prefix: [] }, { after: [NaN] }), invalidInput);
        assert.deepEqual(await store.list({ prefix: [] }), []);
      }),
  );

  test("calls after close fail", opts, async () => {
    const store = await h.open();
    await store.close();
    await assert.rejects(store.getMany([["a"]]));
    await assert.rejects(store.commit({ set: [{ key: ["a"], value: bytes("a") }] }));
  });

  const reopen = h.options.reopen;
  if (reopen) {
    test("committed data and versions survive close and reopen", opts, async () => {
      const store = await h.open();
      const version = await set(store, ["durable", 1], "kept");
      await set(store, ["durable", 2], "gone");
      await store.commit({ delete: [["durable", 2]] });
      await store.close();
      const again = await reopen(store);
      try {
        const [entry, removed] = await again.getMany([["durable", 1], ["durable", 2]]);
        assert.equal(entry?.version, version);
        assert.equal(removed, null);
        assert.equal(await text(again, ["durable", 1]), "kept");
        const later = await set(again, ["durable", 3], "later");
        assert.ok(later > version, "versions keep growing after reopen");
      } finally {
        await again.close();
      }
    });
  }
}
