import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient, type InStatement, type TransactionMode } from "@libsql/client";
import { isFloretError, type KvStore } from "@floret/engine";
import { kvConformance } from "@floret/engine/testing";
import { libsqlStore } from "@floret/engine/libsql";
import { type HranaServer, startHranaServer } from "./support/hrana_server.ts";

const dir = mkdtempSync(join(tmpdir(), "floret-libsql-"));
after(() => rmSync(dir, { recursive: true, force: true }));
let counter = 0;
const urls = new WeakMap<KvStore, string>();

function fileStore(synchronous: "normal" | "full" = "full"): KvStore {
  const url = `file:${join(dir, `store-${++counter}.db`)}`;
  const store = libsqlStore({ url, synchronous });
  urls.set(store, url);
  return store;
}

kvConformance("libsqlStore (file)", fileStore, {
  reopen: (closed) => libsqlStore({ url: urls.get(closed) as string }),
});

// Under NORMAL a lone writer's commits are scheduled differently (no loop
// turn per group): the same contract holds.
kvConformance("libsqlStore (file, synchronous=normal)", () => fileStore("normal"), {
  reopen: (closed) => libsqlStore({ url: urls.get(closed) as string, synchronous: "normal" }),
});

// The kv table as engines before round 10 created it (WITHOUT ROWID). Such
// stores are opened as they are: the same contract must hold on them.
const LEGACY_KV =
  "CREATE TABLE kv (key BLOB PRIMARY KEY, value BLOB NOT NULL, version TEXT NOT NULL) WITHOUT ROWID";

async function legacyFileStore(): Promise<KvStore> {
  const url = `file:${join(dir, `legacy-${++counter}.db`)}`;
  const client = createClient({ url });
  // What an older engine's first open left behind, up to its kv table; the
  // store's own preparation adds the rest exactly as it did then.
  await client.execute("PRAGMA auto_vacuum = INCREMENTAL");
  await client.execute("PRAGMA journal_mode = WAL");
  await client.execute(LEGACY_KV);
  client.close();
  const store = libsqlStore({ url, synchronous: "normal" });
  urls.set(store, url);
  return store;
}

kvConformance("libsqlStore (file, WITHOUT ROWID kv of older stores)", legacyFileStore, {
  reopen: (closed) => libsqlStore({ url: urls.get(closed) as string, synchronous: "normal" }),
});

describe("libsqlStore kv layout", () => {
  async function kvTable(store: KvStore): Promise<{ sql: string; indexes: number }> {
    const client = createClient({ url: urls.get(store) as string });
    try {
      const sql = (await client.execute("SELECT sql FROM sqlite_schema WHERE name = 'kv'")).rows;
      const indexes = (await client.execute(
        "SELECT count(*) FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'kv'",
      )).rows;
      return { sql: String(sql[0]?.[0]), indexes: Number(indexes[0]?.[0]) };
    } finally {
      client.close();
    }
  }

  test("a new store keeps kv as a rowid table with a unique key index", async () => {
    const store = fileStore("normal");
    await store.commit({ set: [{ key: ["a"], value: new Uint8Array([1]) }] });
    await store.close();
    const { sql, indexes } = await kvTable(store);
    assert.doesNotMatch(sql, /WITHOUT ROWID/i);
    assert.match(sql, /key BLOB NOT NULL UNIQUE/);
    assert.equal(indexes, 1);
  });

  test("an older store keeps its WITHOUT ROWID table and its rows across reopening", async () => {
    const store = await legacyFileStore();
    const first = await store.commit({
      checks: [{ key: ["t"], version: null }],
      set: [{ key: ["t"], value: new Uint8Array([1]) }, {
        key: ["e", 1],
        value: new Uint8Array([2]),
      }],
    });
    assert.ok(first.ok);
    await store.close();
    const again = libsqlStore({ url: urls.get(store) as string, synchronous: "normal" });
    urls.set(again, urls.get(store) as string);
    const second = await again.commit({
      checks: [{ key: ["t"], version: first.version }],
      set: [{ key: ["e", 2], value: new Uint8Array([3]) }],
      delete: [["e", 1]],
    });
    assert.ok(second.ok);
    assert.deepEqual(await again.commit({ checks: [{ key: ["t"], version: null }] }), {
      ok: false,
    });
    const entries = await again.list({ prefix: [] });
    assert.deepEqual(entries.map((entry) => entry.key), [["e", 2], ["t"]]);
    await again.close();
    const { sql, indexes } = await kvTable(again);
    assert.match(sql, /WITHOUT ROWID/i);
    assert.equal(indexes, 0);
  });
});

describe("libsqlStore over Hrana HTTP", () => {
  let server: HranaServer;
  before(async () => {
    server = await startHranaServer(join(dir, "remote"));
  });
  after(() => server.close());

  kvConformance("libsqlStore (http)", () => libsqlStore({ url: server.newDatabaseUrl() }), {
    largeValueBytes: 5 * 1024 * 1024,
    modelRuns: 10,
  });

  test("libsql:// URLs reach the same server", async () => {
    const url = server.newDatabaseUrl().replace("http://", "libsql://") + "?tls=0";
    const store = libsqlStore({ url });
    try {
      const result = await store.commit({
        set: [{ key: ["via", "libsql"], value: new Uint8Array([9]) }],
      });
      assert.ok(result.ok);
      const [entry] = await store.getMany([["via", "libsql"]]);
      assert.equal(entry?.version, result.version);
    } finally {
      await store.close();
    }
  });

  test("each commit is exactly one HTTP request after initialisation", async () => {
    const store = libsqlStore({ url: server.newDatabaseUrl() });
    try {
      await store.getMany([["warm-up"]]);
      const start = server.requests;
      for (let i = 0; i < 5; i++) {
        const result = await store.commit({
          checks: [{ key: ["n", i], version: null }],
          set: [{ key: ["n", i], value: new Uint8Array([i]) }, {
            key: ["m", i],
            value: new Uint8Array([i]),
          }],
          delete: [["gone", i]],
        });
        assert.ok(result.ok);
      }
      assert.equal(server.requests - start, 5);
      const failed = await store.commit({ checks: [{ key: ["n", 0], version: null }] });
      assert.deepEqual(failed, { ok: false });
      assert.equal(server.requests - start, 6);
    } finally {
      await store.close();
    }
  });
});

describe("libsqlStore failures", () => {
  test("a commit waits out another connection's write lock and the store stays usable", async () => {
    const url = `file:${join(dir, "locked.db")}`;
    const store = libsqlStore({ url, busyTimeoutMs: 10 });
    await store.commit({ set: [{ key: ["a"], value: new Uint8Array([1]) }] });
    const other = createClient({ url });
    const lock = await other.transaction("write");
    await lock.execute("UPDATE kv SET value = x'02'");
    setTimeout(() => void lock.commit(), 300);
    // Busy at first, then past the lock: later commits must not stay stuck.
    const first = await store.commit({ set: [{ key: ["b"], value: new Uint8Array([1]) }] });
    const second = await store.commit({ set: [{ key: ["c"], value: new Uint8Array([1]) }] });
    assert.ok(first.ok && second.ok);
    assert.equal((await store.list({ prefix: [] })).length, 3);
    other.close();
    await store.close();
  });

  test("a failure late in a commit batch rolls back its writes and is not a failed check", async () => {
    const client = createClient({ url: `file:${join(dir, "late-failure.db")}` });
    const store = libsqlStore({ client });
    await store.commit({ set: [{ key: ["a"], value: new Uint8Array([1]) }] });
    const broken = libsqlStore({
      client: new Proxy(client, {
        get: (target, name) => {
          const value = Reflect.get(target, name, target);
          if (name !== "batch") return typeof value === "function" ? value.bind(target) : value;
          // The real batch, with a statement that fails after every write ran.
          return (statements: InStatement[], mode: TransactionMode) =>
            target.batch([...statements, "SELECT * FROM no_such_table"], mode);
        },
      }),
    });
    const failure = await broken.commit({
      set: [{ key: ["a"], value: new Uint8Array([2]) }, { key: ["b"], value: new Uint8Array([2]) }],
    }).catch((e) => e);
    assert.ok(isFloretError(failure, "storage_failure"), String(failure));
    assert.ok(failure.cause instanceof Error);
    const entries = await store.list({ prefix: [] });
    assert.deepEqual(entries.map((entry) => [entry.key, Array.from(entry.value)]), [[["a"], [1]]]);
    client.close();
  });

  test("a store over a shared client never closes it", async () => {
    const client = createClient({ url: `file:${join(dir, "shared.db")}` });
    const store = libsqlStore({ client });
    await store.commit({ set: [{ key: ["k"], value: new Uint8Array([1]) }] });
    await store.close();
    assert.equal(client.closed, false);
    assert.equal((await client.execute("SELECT count(*) FROM kv")).rows[0][0], 1);
    client.close();
  });

  test("I/O failures surface as storage_failure with a cause and change nothing", async () => {
    const client = createClient({ url: `file:${join(dir, "failing.db")}` });
    const store = libsqlStore({ client });
    await store.commit({ set: [{ key: ["k"], value: new Uint8Array([1]) }] });
    const broken = libsqlStore({
      client: new Proxy(client, {
        get: (target, name) => {
          if (name === "batch") return () => Promise.reject(new Error("disk on fire"));
          const value = Reflect.get(target, name, target);
          return typeof value === "function" ? value.bind(target) : value;
        },
      }),
    });
    const failure = await broken.commit({ set: [{ key: ["k"], value: new Uint8Array([2]) }] })
      .catch((e) => e);
    assert.ok(isFloretError(failure, "storage_failure"));
    assert.equal((failure.cause as Error).message, "disk on fire");
    const [entry] = await store.getMany([["k"]]);
    assert.deepEqual(Array.from(entry?.value ?? []), [1]);
    client.close();
    await assert.rejects(
      store.getMany([["k"]]),
      (e) => isFloretError(e, "storage_failure") && e.cause !== undefined,
    );
    await assert.rejects(
      store.commit({ delete: [["k"]] }),
      (e) => isFloretError(e, "storage_failure"),
    );
  });

  test("a store written by a newer schema fails closed with store_too_new", async () => {
    const url = `file:${join(dir, "newer.db")}`;
    const first = libsqlStore({ url });
    await first.commit({ set: [{ key: ["k"], value: new Uint8Array([1]) }] });
    await first.close();
    const client = createClient({ url });
    await client.execute("UPDATE floret_meta SET value = 99 WHERE name = 'schema'");
    client.close();
    const newer = libsqlStore({ url });
    await assert.rejects(newer.getMany([["k"]]), (e) => isFloretError(e, "store_too_new"));
    await newer.close();
  });
});
