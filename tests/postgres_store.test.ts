// The Postgres store against a real PostgreSQL server: the shared KvStore
// conformance suite, schema creation by several hosts at once, a newer schema
// refused, a shared client left open, and options refused before any I/O.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import postgres from "postgres";
import { isFloretError, type KvStore } from "@floret/engine";
import { kvConformance } from "@floret/engine/testing";
import { postgresStore } from "@floret/engine/postgres";
import { freshDatabase, NO_POSTGRES } from "./support/postgres.ts";
import { skipBecause } from "./support/skip.ts";

const urls = new WeakMap<KvStore, string>();
async function fresh(): Promise<KvStore> {
  const url = await freshDatabase("conf");
  const store = postgresStore({ url, maxConnections: 4 });
  urls.set(store, url);
  return store;
}

describe("postgresStore", { skip: skipBecause(import.meta.url, NO_POSTGRES) }, () => {
  kvConformance("postgresStore", fresh, {
    reopen: (closed) => postgresStore({ url: urls.get(closed) as string, maxConnections: 4 }),
    largeValueBytes: 5 * 1024 * 1024,
  });

  test("four stores opening one new database at once create the schema once", async () => {
    const url = await freshDatabase("schema");
    const stores = Array.from({ length: 4 }, () => postgresStore({ url, maxConnections: 2 }));
    try {
      const results = await Promise.all(
        stores.map((store, i) =>
          store.commit({ set: [{ key: ["host", i], value: new Uint8Array([i]) }] })
        ),
      );
      assert.ok(results.every((result) => result.ok));
      assert.equal((await stores[0].list({ prefix: ["host"] })).length, 4);
    } finally {
      await Promise.all(stores.map((store) => store.close()));
    }
  });

  test("a database written by a newer schema is refused with store_too_new", async () => {
    const url = await freshDatabase("newer");
    const first = postgresStore({ url });
    await first.commit({ set: [{ key: ["a"], value: new Uint8Array([1]) }] });
    await first.close();
    const admin = postgres(url, { max: 1, onnotice: () => {} });
    await admin.unsafe(
      "UPDATE floret_kv SET value = convert_to('99', 'UTF8') WHERE key = '\\x00736368656d61'",
    );
    await admin.end();
    const later = postgresStore({ url });
    await assert.rejects(later.getMany([["a"]]), (error) => isFloretError(error, "store_too_new"));
    await later.close();
  });

  test("meta rows never show in a scan from the empty key", async () => {
    const url = await freshDatabase("meta");
    const store = postgresStore({ url });
    try {
      await store.commit({ set: [{ key: ["x"], value: new Uint8Array([1]) }] });
      const all = await store.list({ start: [], end: [true] });
      assert.deepEqual(all.map((entry) => entry.key), [["x"]]);
    } finally {
      await store.close();
    }
  });

  test("a shared client stays open after the store closes", async () => {
    const url = await freshDatabase("shared");
    const sql = postgres(url, { max: 2, onnotice: () => {} });
    try {
      const store = postgresStore({ sql });
      assert.ok((await store.commit({ set: [{ key: ["k"], value: new Uint8Array([7]) }] })).ok);
      await store.close();
      await assert.rejects(
        store.getMany([["k"]]),
        (error) => isFloretError(error, "storage_failure"),
      );
      const [row] = await sql`SELECT count(*)::int AS n FROM floret_kv WHERE key >= '\\x01'`;
      assert.equal(row.n, 1);
    } finally {
      await sql.end();
    }
  });

  test("an unreachable server is storage_failure, and a later call can succeed", async () => {
    // Port 1 on loopback: nothing listens there, so the connection is refused at once.
    const store = postgresStore({ url: "postgres://floret@127.0.0.1:1/none" });
    await assert.rejects(
      store.getMany([["k"]]),
      (error) => isFloretError(error, "storage_failure"),
    );
    await store.close();
  });
});

test("malformed options are invalid_input before any I/O", () => {
  for (
    const options of [null, {}, { url: "mysql://x" }, { url: "postgres://x", maxConnections: 0 }, {
      sql: {},
    }]
  ) {
    assert.throws(
      () => postgresStore(options as never),
      (error) => isFloretError(error, "invalid_input"),
      JSON.stringify(options),
    );
  }
});
