// denoKvStore: the shared conformance suite on in-memory and file-backed
// Deno KV, plus the Deno KV limits the adapter handles itself (64 KiB values,
// 800 KiB per atomic operation, 10 checks, 1,000 mutations, 2 KiB keys).
// Only Deno has Deno KV: on Bun and Node these tests are skipped, saying so.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isFloretError, type KvKey, type KvStore } from "@floret/engine";
import { kvConformance } from "@floret/engine/testing";
import { denoKvStore } from "@floret/engine/deno-kv";
import { skipOffDeno } from "./support/skip.ts";

/** The raw handle, as far as these tests look underneath the store. */
interface RawKv {
  list(selector: { prefix: unknown[] }): AsyncIterable<{ key: unknown[]; value: unknown }>;
  close(): void;
}
const deno = (globalThis as { Deno?: { openKv(path?: string): Promise<RawKv> } }).Deno;
const skip = skipOffDeno(import.meta.url);
const openKv = (path = ":memory:"): Promise<RawKv> => deno!.openKv(path);

const dir = mkdtempSync(join(tmpdir(), "floret-denokv-"));
after(() => rmSync(dir, { recursive: true, force: true }));
let counter = 0;
const paths = new WeakMap<KvStore, string>();

async function fileStore(path = join(dir, `store-${++counter}.kv`)): Promise<KvStore> {
  const store = denoKvStore(await openKv(path), { closeKv: true });
  paths.set(store, path);
  return store;
}

if (deno) {
  kvConformance("denoKvStore (memory)", async () => denoKvStore(await openKv(), { closeKv: true }));
  kvConformance("denoKvStore (file)", () => fileStore(), {
    reopen: (closed) => fileStore(paths.get(closed)),
    modelRuns: 10,
  });
} else {
  test("KvStore conformance: denoKvStore", { skip }, () => {});
}

const invalidInput = (error: unknown): boolean => isFloretError(error, "invalid_input");

function filled(length: number, seed: number): Uint8Array {
  const bytes = new Uint8Array(length);
  for (let i = 0; i < length; i++) bytes[i] = (i * 31 + seed) % 251;
  return bytes;
}

/** Byte equality without assert's diff, which takes minutes on megabytes. */
function sameBytes(a: Uint8Array | undefined, b: Uint8Array): boolean {
  return a !== undefined && a.length === b.length && a.every((byte, i) => byte === b[i]);
}

async function chunkCount(kv: RawKv): Promise<number> {
  let n = 0;
  for await (const _ of kv.list({ prefix: ["floret.blob"] })) n++;
  return n;
}

/** Runs `body` with a fresh in-memory handle and a store over it that leaves the handle open. */
async function withKv(body: (kv: RawKv, store: KvStore) => Promise<void>): Promise<void> {
  const kv = await openKv();
  try {
    await body(kv, denoKvStore(kv));
  } finally {
    kv.close();
  }
}

test("something that is not a Deno.Kv is refused with invalid_input", () => {
  assert.throws(() => denoKvStore({ getMany: () => [] }), invalidInput);
  assert.throws(() => denoKvStore(null), invalidInput);
});

test("values over 64 KiB go to chunks that replacing, deleting or a failed check leave behind", {
  skip,
}, () =>
  withKv(async (kv, store) => {
    const big = filled(5 * 1024 * 1024 + 7, 1);
    const first = await store.commit({ set: [{ key: ["big"], value: big }] });
    assert.ok(first.ok);
    assert.equal(await chunkCount(kv), 81);
    const refused = await store.commit({
      checks: [{ key: ["big"], version: null }],
      set: [{ key: ["big"], value: filled(300_000, 2) }],
    });
    assert.deepEqual(refused, { ok: false });
    assert.equal(await chunkCount(kv), 81, "the refused commit's chunks are gone");
    const [kept] = await store.getMany([["big"]]);
    assert.ok(sameBytes(kept?.value, big));
    assert.equal(kept?.version, first.version);

    await store.commit({ set: [{ key: ["big"], value: filled(10, 3) }] });
    assert.equal(await chunkCount(kv), 0, "a small value replaced the chunks");
    await store.commit({ set: [{ key: ["big"], value: filled(70_000, 4) }] });
    assert.equal(await chunkCount(kv), 2);
    await store.commit({ delete: [["big"]] });
    assert.equal(await chunkCount(kv), 0, "a delete removed the chunks");
  }));

test("a commit over Deno's 800 KiB per operation still lands whole, with one version", {
  skip,
}, () =>
  withKv(async (kv, store) => {
    await store.commit({ set: [{ key: ["guard"], value: filled(1, 0) }] });
    const [guard] = await store.getMany([["guard"]]);
    const set = Array.from({ length: 20 }, (_, i) => ({
      key: ["part", i] as KvKey,
      value: filled(60_000, i),
    }));
    const result = await store.commit({
      checks: [{ key: ["guard"], version: guard!.version }],
      set,
    });
    assert.ok(result.ok);
    assert.ok(await chunkCount(kv) > 0, "some values moved to chunks to fit");
    const listed = await store.list({ prefix: ["part"] });
    assert.equal(listed.length, 20);
    listed.forEach((entry, i) => {
      assert.ok(sameBytes(entry.value, set[i].value), `part ${i}`);
      assert.equal(entry.version, result.version);
    });
  }));

test("commits Deno KV cannot apply atomically fail with invalid_input and write nothing", {
  skip,
}, () =>
  withKv(async (_kv, store) => {
    const value = filled(1, 0);
    const checks = Array.from({ length: 11 }, (_, i) => ({ key: ["c", i], version: null }));
    await assert.rejects(store.commit({ checks, set: [{ key: ["a"], value }] }), invalidInput);
    const many = Array.from({ length: 1001 }, (_, i) => ({ key: ["m", i], value }));
    await assert.rejects(store.commit({ set: many }), invalidInput);
    const long = ["x".repeat(2100)];
    await assert.rejects(
      store.commit({ set: [{ key: ["a"], value }, { key: long, value }] }),
      invalidInput,
    );
    await assert.rejects(store.getMany([long]), invalidInput);
    assert.deepEqual(await store.list({ prefix: [] }), []);
    const ten = checks.slice(0, 10);
    assert.ok((await store.commit({ checks: ten, set: many.slice(0, 1000) })).ok, "the limits");
  }));

test(
  "a read that races the replacement of a large value returns the new value",
  { skip },
  () =>
    withKv(async (kv, writer) => {
      await writer.commit({ set: [{ key: ["doc"], value: filled(200_000, 1) }] });
      let raced = false;
      // Between the reader's header read and its chunk read, another writer replaces the value.
      const racing = new Proxy(kv, {
        get(target, name) {
          const member = Reflect.get(target, name, target);
          if (name !== "list") return typeof member === "function" ? member.bind(target) : member;
          return (selector: { prefix: unknown[] }, options: unknown) => {
            const list = (target.list as (s: unknown, o: unknown) => AsyncIterable<unknown>).bind(
              target,
            );
            if (raced || selector.prefix?.[0] !== "floret.blob") return list(selector, options);
            raced = true;
            return (async function* () {
              await writer.commit({ set: [{ key: ["doc"], value: filled(150_000, 2) }] });
              yield* list(selector, options);
            })();
          };
        },
      });
      const [entry] = await denoKvStore(racing).getMany([["doc"]]);
      assert.ok(raced);
      assert.ok(sameBytes(entry?.value, filled(150_000, 2)), "the replacement was read");
    }),
);

test(
  "close leaves a handle it was not told to close open, and later calls fail",
  { skip },
  () =>
    withKv(async (kv, store) => {
      await store.commit({ set: [{ key: ["k"], value: filled(3, 0) }] });
      await store.close();
      await assert.rejects(store.getMany([["k"]]), (e) => isFloretError(e, "storage_failure"));
      const [entry] = await denoKvStore(kv).getMany([["k"]]);
      assert.deepEqual(entry?.value, filled(3, 0));
    }),
);

test("listings longer than one Deno KV batch (1,000 entries) come back whole and in order", {
  skip,
}, () =>
  withKv(async (_kv, store) => {
    const value = filled(8, 0);
    for (let i = 0; i < 2500; i += 500) {
      const set = Array.from({ length: 500 }, (_, j) => ({ key: ["n", i + j], value }));
      assert.ok((await store.commit({ set })).ok);
    }
    const all = (await store.list({ prefix: ["n"] })).map((entry) => entry.key[1]);
    assert.deepEqual(all, Array.from({ length: 2500 }, (_, i) => i));
    const back = await store.list({ prefix: ["n"] }, { reverse: true, limit: 1500 });
    assert.deepEqual(back.map((entry) => entry.key[1]), all.slice(1000).reverse());
  }));
