import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { createClient } from "@libsql/client";
import { isFloretError, type KvCommit, type KvCommitResult } from "@floret/engine";
import { libsqlStore } from "@floret/engine/libsql";

const dir = mkdtempSync(join(tmpdir(), "floret-group-"));
after(() => rmSync(dir, { recursive: true, force: true }));
let counter = 0;
const freshUrl = (): string => `file:${join(dir, `group-${++counter}.db`)}`;

const KEYS = ["a", "b", "c", "d"] as const;
type Name = typeof KEYS[number];

/** A check as generated: against the version seen at the start, absent, or a made-up one. */
type Expect = "initial" | "absent" | "bogus";
interface Planned {
  checks: { key: Name; expect: Expect }[];
  set: Name[];
  del: Name[];
  /** Event-loop turns to wait before calling commit, so commits spread over groups. */
  delay: number;
}

const planned: fc.Arbitrary<Planned> = fc.record({
  checks: fc.uniqueArray(
    fc.record({
      key: fc.constantFrom(...KEYS),
      expect: fc.constantFrom<Expect[]>("initial", "initial", "absent", "bogus"),
    }),
    { maxLength: 2, selector: (check) => check.key },
  ),
  set: fc.uniqueArray(fc.constantFrom(...KEYS), { maxLength: 3 }),
  del: fc.uniqueArray(fc.constantFrom(...KEYS), { maxLength: 1 }),
  delay: fc.constantFrom(0, 0, 0, 1, 2),
}).map((p) => ({ ...p, del: p.del.filter((key) => !p.set.includes(key)) }));

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe("libsqlStore group commit", () => {
  test(
    "concurrent commits with random checks land exactly when a serial run would let them",
    { timeout: 120_000 },
    async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.subarray([...KEYS]),
          fc.array(planned, { minLength: 2, maxLength: 40 }),
          async (initialKeys, commits) => {
            const store = libsqlStore({ url: freshUrl(), synchronous: "normal" });
            try {
              // Model: key -> [value, version], starting from the initial commit.
              const model = new Map<Name, [number, string]>();
              if (initialKeys.length > 0) {
                const first = await store.commit({
                  set: initialKeys.map((key) => ({ key: ["k", key], value: Uint8Array.of(255) })),
                });
                assert.ok(first.ok);
                for (const key of initialKeys as Name[]) model.set(key, [255, first.version]);
              }
              const initial = new Map(model);
              const ops: KvCommit[] = commits.map((c, i) => ({
                checks: c.checks.map(({ key, expect }) => ({
                  key: ["k", key],
                  version: expect === "absent"
                    ? null
                    : expect === "bogus"
                    ? "99999999999999999999"
                    : (initial.get(key)?.[1] ?? null),
                })),
                set: c.set.map((key) => ({ key: ["k", key], value: Uint8Array.of(i) })),
                delete: c.del.map((key) => ["k", key]),
              }));
              // Called in index order (delays only push later ones into later groups).
              const results: Promise<KvCommitResult>[] = [];
              for (const [i, op] of ops.entries()) {
                for (let t = 0; t < commits[i].delay; t++) await turn();
                results.push(store.commit(op));
              }
              const settled = await Promise.all(results);
              let lastVersion = "";
              settled.forEach((result, i) => {
                const holds = commits[i].checks.every(({ key, expect }) => {
                  const current = model.get(key)?.[1] ?? null;
                  const wanted = ops[i].checks?.find((c) => c.key[1] === key)?.version;
                  return expect !== "bogus" && current === wanted;
                });
                if (!holds) {
                  assert.deepEqual(result, { ok: false }, `commit ${i} should fail its check`);
                  return;
                }
                assert.ok(result.ok, `commit ${i} should land`);
                assert.ok(result.version > lastVersion, "landed versions grow in call order");
                lastVersion = result.version;
                for (const key of commits[i].set) model.set(key, [i, result.version]);
                for (const key of commits[i].del) model.delete(key);
              });
              // All or nothing per commit: the store holds exactly the model.
              const stored = await store.list({ prefix: ["k"] });
              assert.deepEqual(
                stored.map((e) => [e.key[1], e.value[0], e.version]),
                [...model].sort(([a], [b]) => a < b ? -1 : 1).map(([k, [v, ver]]) => [k, v, ver]),
              );
            } finally {
              await store.close();
            }
          },
        ),
        { numRuns: 40 },
      );
    },
  );

  test("a commit whose write fails is rolled back alone; the rest of its group lands", async () => {
    const url = freshUrl();
    const store = libsqlStore({ url });
    await store.commit({ set: [{ key: ["setup"], value: Uint8Array.of(1) }] });
    // Another connection makes one key unwritable with a trigger that writes
    // elsewhere, then aborts: what the failed statement did must go too.
    const other = createClient({ url });
    await other.execute("CREATE TABLE side (key BLOB)");
    await other.execute(
      `CREATE TRIGGER poison BEFORE INSERT ON kv WHEN NEW.value = x'ee'
       BEGIN INSERT INTO side VALUES (NEW.key); SELECT RAISE(ABORT, 'poisoned write'); END`,
    );
    // Commit 5 fails on its second write, commit 7 on its only one.
    const outcomes = await Promise.allSettled(
      Array.from({ length: 12 }, (_, i) =>
        store.commit({
          set: i === 7 ? [{ key: ["group", i, "only"], value: Uint8Array.of(0xee) }] : [
            { key: ["group", i, "first"], value: Uint8Array.of(i) },
            { key: ["group", i, "second"], value: Uint8Array.of(i === 5 ? 0xee : i) },
          ],
        })),
    );
    outcomes.forEach((outcome, i) => {
      if (i === 5 || i === 7) {
        assert.equal(outcome.status, "rejected");
        assert.ok(isFloretError(outcome.reason, "storage_failure"), String(outcome.reason));
      } else assert.ok(outcome.status === "fulfilled" && outcome.value.ok, `commit ${i}`);
    });
    const keys = (await store.list({ prefix: ["group"] })).map((e) => e.key);
    assert.equal(keys.length, 20);
    assert.ok(
      !keys.some((key) => key[1] === 5 || key[1] === 7),
      "nothing of failed commits remains",
    );
    const side = await other.execute("SELECT count(*) FROM side");
    assert.equal(Number(side.rows[0][0]), 0, "nor anything their failed statements wrote");
    other.close();
    const later = await store.commit({ set: [{ key: ["after"], value: Uint8Array.of(1) }] });
    assert.ok(later.ok);
    await store.close();
  });

  test("a commit whose delete fails leaves none of its sets, alone or in a group", async () => {
    const url = freshUrl();
    const store = libsqlStore({ url });
    const kept = ["kept"];
    await store.commit({ set: [{ key: kept, value: Uint8Array.of(1) }] });
    const other = createClient({ url });
    await other.execute(
      `CREATE TRIGGER keep BEFORE DELETE ON kv WHEN OLD.value = x'01'
       BEGIN SELECT RAISE(ABORT, 'kept row'); END`,
    );
    other.close();
    const failing = (i: number): KvCommit => ({
      checks: [{ key: ["deleting", i, "a"], version: null }],
      set: [
        { key: ["deleting", i, "a"], value: Uint8Array.of(2) },
        { key: ["deleting", i, "b"], value: Uint8Array.of(2) },
      ],
      delete: [kept],
    });
    // Alone (sequential), then inside a group between commits that land.
    await assert.rejects(store.commit(failing(0)), (e) => isFloretError(e, "storage_failure"));
    const outcomes = await Promise.allSettled([
      store.commit({ set: [{ key: ["deleting", 1, "ok"], value: Uint8Array.of(3) }] }),
      store.commit(failing(2)),
      store.commit({
        set: [
          { key: ["deleting", 3, "ok"], value: Uint8Array.of(3) },
          { key: ["deleting", 3, "too"], value: Uint8Array.of(3) },
        ],
        delete: [["deleting", "absent"]],
      }),
    ]);
    assert.deepEqual(outcomes.map((o) => o.status), ["fulfilled", "rejected", "fulfilled"]);
    assert.deepEqual(
      (await store.list({ prefix: ["deleting"] })).map((e) => e.key),
      [["deleting", 1, "ok"], ["deleting", 3, "ok"], ["deleting", 3, "too"]],
    );
    assert.equal((await store.getMany([kept]))[0]?.value[0], 1);
    await store.close();
  });

  test("a write that ends the whole transaction fails its whole group, and nothing lands", async () => {
    const url = freshUrl();
    const store = libsqlStore({ url });
    await store.commit({ set: [{ key: ["setup"], value: Uint8Array.of(1) }] });
    const other = createClient({ url });
    await other.execute(
      `CREATE TRIGGER undo BEFORE INSERT ON kv WHEN NEW.value = x'dd'
       BEGIN SELECT RAISE(ROLLBACK, 'transaction undone'); END`,
    );
    other.close();
    const outcomes = await Promise.allSettled(
      Array.from({ length: 6 }, (_, i) =>
        store.commit({
          set: [{ key: ["undone", i], value: Uint8Array.of(i === 2 ? 0xdd : i) }],
        })),
    );
    assert.ok(outcomes.every((outcome) => outcome.status === "rejected"));
    assert.deepEqual(await store.list({ prefix: ["undone"] }), []);
    const later = await store.commit({ set: [{ key: ["after"], value: Uint8Array.of(1) }] });
    assert.ok(later.ok);
    await store.close();
  });

  test("a commit alone in its group: a failed write or check leaves nothing, versions continue", async () => {
    const url = freshUrl();
    const store = libsqlStore({ url });
    const first = await store.commit({ set: [{ key: ["alone", 1], value: Uint8Array.of(1) }] });
    assert.ok(first.ok);
    const other = createClient({ url });
    await other.execute(
      `CREATE TRIGGER poison BEFORE INSERT ON kv WHEN NEW.value = x'ee'
       BEGIN SELECT RAISE(ABORT, 'poisoned write'); END`,
    );
    other.close();
    // Sequential commits never share a group.
    await assert.rejects(
      store.commit({
        set: [
          { key: ["alone", 2], value: Uint8Array.of(2) },
          { key: ["alone", 3], value: Uint8Array.of(0xee) },
        ],
      }),
      (error) => isFloretError(error, "storage_failure"),
    );
    const refused = await store.commit({
      checks: [{ key: ["alone", 1], version: "stale" }],
      set: [{ key: ["alone", 4], value: Uint8Array.of(4) }],
    });
    assert.equal(refused.ok, false);
    const second = await store.commit({
      checks: [{ key: ["alone", 1], version: first.ok ? first.version : null }],
      set: [{ key: ["alone", 5], value: Uint8Array.of(5) }],
    });
    assert.ok(second.ok && first.ok && second.version > first.version);
    const stored = await store.list({ prefix: ["alone"] });
    assert.deepEqual(stored.map((e) => [e.key[1], e.version]), [
      [1, first.ok ? first.version : ""],
      [5, second.ok ? second.version : ""],
    ]);
    await store.close();
  });

  test("sequential commits that rewrite the keys they check land whole or not at all", async () => {
    const store = libsqlStore({ url: freshUrl() });
    const value = (n: number) => Uint8Array.of(n);
    const first = await store.commit({ set: [{ key: ["seq", "a"], value: value(1) }] });
    assert.ok(first.ok);
    let version = first.version;
    for (let i = 2; i < 40; i++) {
      // One commit alone at a time: each runs as one statement whose checks
      // must see the table before its own writes.
      const landed = await store.commit({
        checks: [{ key: ["seq", "a"], version }, { key: ["seq", "b", i], version: null }],
        set: [{ key: ["seq", "b", i], value: value(i) }, { key: ["seq", "a"], value: value(i) }],
      });
      assert.ok(landed.ok && landed.version > version, `commit ${i}`);
      const refused = await store.commit({
        checks: [{ key: ["seq", "a"], version }],
        set: [{ key: ["seq", "a"], value: value(0) }, { key: ["seq", "c", i], value: value(0) }],
      });
      assert.deepEqual(refused, { ok: false }, `stale check ${i}`);
      version = landed.version;
    }
    const [a] = await store.getMany([["seq", "a"]]);
    assert.deepEqual([a?.value, a?.version], [value(39), version]);
    assert.equal((await store.list({ prefix: ["seq", "b"] })).length, 38);
    assert.deepEqual(await store.list({ prefix: ["seq", "c"] }), []);
    await store.close();
  });

  test("a group that meets another connection's write lock waits, then lands whole", async () => {
    const url = freshUrl();
    const store = libsqlStore({ url, synchronous: "normal", busyTimeoutMs: 1 });
    const first = await store.commit({ set: [{ key: ["held"], value: Uint8Array.of(1) }] });
    assert.ok(first.ok);
    const other = createClient({ url });
    const held = await other.transaction("write");
    await held.execute("SELECT 1 FROM kv LIMIT 1");
    let settled = false;
    const pending = Array.from({ length: 3 }, (_, i) =>
      store.commit({
        checks: [{ key: ["held"], version: first.version }],
        set: [{ key: ["waited", i], value: Uint8Array.of(i) }],
      }).finally(() => {
        settled = true;
      }));
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(settled, false, "no commit lands while another connection holds the lock");
    await held.commit();
    other.close();
    const results = await Promise.all(pending);
    assert.ok(results.every((result) => result.ok));
    assert.equal(new Set(results.map((r) => r.ok && r.version)).size, 3, "one version each");
    assert.equal((await store.list({ prefix: ["waited"] })).length, 3);
    await store.close();
  });

  test("versions grow in commit order across connections that share the file", async () => {
    const url = freshUrl();
    const a = libsqlStore({ url });
    const b = libsqlStore({ url });
    // A store on a shared client bumps the counter by one per commit.
    const client = createClient({ url });
    const shared = libsqlStore({ client });
    const versions: string[] = [];
    const commit = async (store: typeof a, key: number): Promise<void> => {
      const result = await store.commit({
        set: [{ key: ["order", key], value: Uint8Array.of(1) }],
      });
      assert.ok(result.ok);
      versions.push(result.version);
    };
    // Past the end of a's first block of versions, then alternating writers.
    for (let i = 0; i < 1100; i++) await commit(a, i);
    const order = [b, a, shared, a, b, b, shared, shared, a, b, a];
    for (const [i, store] of order.entries()) await commit(store, 1100 + i);
    // And groups of concurrent commits from both connections at once.
    await Promise.all(Array.from({ length: 20 }, (_, i) => commit(i % 2 ? a : b, 2000 + i)));
    const serial = versions.slice(0, 1100 + order.length);
    serial.forEach((version, i) => {
      if (i > 0) {
        assert.ok(version > serial[i - 1], `commit ${i}: ${version} after ${serial[i - 1]}`);
      }
    });
    assert.ok(versions.slice(serial.length).every((version) => version > serial.at(-1)!));
    assert.equal(new Set(versions).size, versions.length, "no version handed out twice");
    const stored = await shared.list({ prefix: ["order"] });
    assert.deepEqual(
      stored.map((entry) => entry.version).sort(),
      [...versions].sort(),
      "every entry carries the version its commit returned",
    );
    await Promise.all([a.close(), b.close(), shared.close()]);
    client.close();
  });

  test("200 concurrent commits share transactions: far fewer WAL frames than commits", async () => {
    const url = freshUrl();
    const path = url.slice("file:".length);
    const store = libsqlStore({ url });
    await store.commit({ set: [{ key: ["setup"], value: Uint8Array.of(1) }] });
    const walBefore = statSync(`${path}-wal`).size;
    const results = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        store.commit({
          checks: [{ key: ["writer", i], version: null }],
          set: [{ key: ["writer", i], value: Uint8Array.of(i % 256) }],
        })),
    );
    assert.ok(results.every((result) => result.ok));
    assert.equal(new Set(results.map((r) => r.ok && r.version)).size, 200, "one version each");
    // One transaction per commit would append at least two pages (the kv
    // leaf and the version counter) per commit: 400 frames or more.
    const frames = (statSync(`${path}-wal`).size - walBefore) / (4096 + 24);
    assert.ok(frames < 100, `${frames} WAL frames for 200 commits`);
    await store.close();
  });

  // At which of 40 sequential commits a loop turn queued before them had come.
  const turnCameAt = async (synchronous: "normal" | "full"): Promise<number | undefined> => {
    const store = libsqlStore({ url: freshUrl(), synchronous });
    await store.commit({ set: [{ key: ["setup"], value: Uint8Array.of(1) }] });
    let turned = false;
    setImmediate(() => turned = true);
    let cameAt: number | undefined;
    for (let i = 0; i < 40; i++) {
      const result = await store.commit({
        checks: [{ key: ["seq", i], version: null }],
        set: [{ key: ["seq", i], value: Uint8Array.of(i) }],
      });
      assert.ok(result.ok);
      if (turned && cameAt === undefined) cameAt = i;
    }
    assert.equal((await store.list({ prefix: ["seq"] })).length, 40);
    await store.close();
    return cameAt;
  };

  test("synchronous=NORMAL: a lone writer's commits skip the loop turn, a bounded run at a time", async () => {
    const cameAt = await turnCameAt("normal");
    assert.ok(cameAt !== undefined, "some commit waits a loop turn");
    assert.ok(cameAt > 1, `the turn came at commit ${cameAt}`);
  });

  test("synchronous=FULL: every group waits a loop turn, so concurrent commits share its fsync", async () => {
    assert.equal(await turnCameAt("full"), 0);
  });

  test("close waits for accepted commits, and later calls fail", async () => {
    const url = freshUrl();
    const store = libsqlStore({ url });
    await store.getMany([["warm-up"]]);
    const pending = Array.from(
      { length: 10 },
      (_, i) => store.commit({ set: [{ key: ["late", i], value: Uint8Array.of(i) }] }),
    );
    await store.close();
    for (const result of await Promise.all(pending)) assert.ok(result.ok);
    await assert.rejects(
      store.commit({ set: [{ key: ["x"], value: Uint8Array.of(1) }] }),
      (e) => isFloretError(e, "storage_failure"),
    );
    const again = libsqlStore({ url });
    assert.equal((await again.list({ prefix: ["late"] })).length, 10);
    await again.close();
  });
});
