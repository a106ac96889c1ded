// Group commit of the Postgres store against a real PostgreSQL server:
// concurrent commits with random checks on shared keys land exactly as some
// serial run would let them (in call order with one lane), racing commits on
// one key let exactly one win, a commit the server refuses fails alone, a
// sequential writer never groups, and a schema-1 database is upgraded.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import postgres, { type Sql } from "postgres";
import { isFloretError, type KvCommit, type KvCommitResult, type KvStore } from "@floret/engine";
import { postgresStore } from "@floret/engine/postgres";
import { freshDatabase, NO_POSTGRES } from "./support/postgres.ts";
import { skipBecause } from "./support/skip.ts";

const KEYS = ["a", "b", "c", "d"] as const;
type Name = typeof KEYS[number];

/** A check as generated: against the version seen at the start, absent, or a made-up one. */
type Expect = "initial" | "absent" | "bogus";
interface Planned {
  checks: { key: Name; expect: Expect }[];
  set: Name[];
  del: Name[];
}

const planned: fc.Arbitrary<Planned> = fc.record({
  checks: fc.uniqueArray(
    fc.record({
      key: fc.constantFrom(...KEYS),
      expect: fc.constantFrom<Expect[]>("initial", "initial", "absent", "bogus"),
    }),
    { maxLength: 2, selector: (check) => check.key },
  ),
  set: fc.uniqueArray(fc.constantFrom(...KEYS), { minLength: 1, maxLength: 3 }),
  del: fc.uniqueArray(fc.constantFrom(...KEYS), { maxLength: 1 }),
}).map((p) => ({ ...p, del: p.del.filter((key) => !p.set.includes(key)) }));

/** A client that counts the group calls the store makes through it. */
function counting(sql: Sql): { client: Sql; groups: () => number } {
  let groups = 0;
  const client = Object.assign(
    (...args: never[]) => (sql as unknown as (...a: never[]) => unknown)(...args),
    {
      unsafe: (text: string, params?: never[]) => {
        if (text.includes("floret_kv_commit_many")) groups += 1;
        return sql.unsafe(text, params);
      },
      begin: (...args: never[]) => (sql.begin as (...a: never[]) => unknown)(...args),
      options: sql.options,
    },
  );
  return { client: client as unknown as Sql, groups: () => groups };
}

describe("postgresStore group commit", { skip: skipBecause(import.meta.url, NO_POSTGRES) }, () => {
  let url = "";
  const clients: Sql[] = [];
  const open = (max: number): { store: KvStore; groups: () => number } => {
    const sql = postgres(url, { max, onnotice: () => {} });
    clients.push(sql);
    const { client, groups } = counting(sql);
    return { store: postgresStore({ sql: client }), groups };
  };
  before(async () => {
    url = await freshDatabase("group");
  });
  after(async () => {
    await Promise.all(clients.map((sql) => sql.end({ timeout: 5 })));
  });

  for (const max of [1, 4]) {
    test(
      `${max} connection(s): concurrent commits with random checks land as a serial run lets them`,
      { timeout: 180_000 },
      async () => {
        const { store, groups } = open(max);
        let run = 0;
        await fc.assert(
          fc.asyncProperty(
            fc.subarray([...KEYS]),
            fc.array(planned, { minLength: 2, maxLength: 40 }),
            async (initialKeys, commits) => {
              const prefix = `run${max}-${++run}`;
              const key = (name: Name) => [prefix, name];
              const model = new Map<Name, [number, string]>();
              if (initialKeys.length > 0) {
                const first = await store.commit({
                  set: initialKeys.map((name) => ({ key: key(name), value: Uint8Array.of(255) })),
                });
                assert.ok(first.ok);
                for (const name of initialKeys as Name[]) model.set(name, [255, first.version]);
              }
              const initial = new Map(model);
              const wanted = (name: Name, expect: Expect): string | null =>
                expect === "absent"
                  ? null
                  : expect === "bogus"
                  ? "99999999999999999999"
                  : (initial.get(name)?.[1] ?? null);
              const ops: KvCommit[] = commits.map((c, i) => ({
                checks: c.checks.map(({ key: name, expect }) => ({
                  key: key(name),
                  version: wanted(name, expect),
                })),
                set: c.set.map((name) => ({ key: key(name), value: Uint8Array.of(i) })),
                delete: c.del.map((name) => key(name)),
              }));
              // All called in one go: the first goes alone, the rest wait and group.
              const settled = await Promise.all(ops.map((op) => store.commit(op)));

              // Replay the landed commits in version order (the order the
              // server applied them): each one's checks must hold there.
              const landed = settled
                .map((result, i) => ({ result, i }))
                .filter((x): x is { result: KvCommitResult & { ok: true }; i: number } =>
                  x.result.ok
                )
                .sort((x, y) => x.result.version < y.result.version ? -1 : 1);
              if (max === 1) {
                assert.deepEqual(
                  landed.map((x) => x.i),
                  landed.map((x) => x.i).sort((a, b) => a - b),
                  "one lane applies commits in call order",
                );
              }
              const holds = (i: number, state: Map<Name, [number, string]>) =>
                commits[i].checks.every(({ key: name, expect }) =>
                  expect !== "bogus" && (state.get(name)?.[1] ?? null) === wanted(name, expect)
                );
              const states = [new Map(model)];
              for (const { result, i } of landed) {
                assert.ok(holds(i, model), `commit ${i} landed although its checks fail`);
                for (const name of commits[i].set) model.set(name, [i, result.version]);
                for (const name of commits[i].del) model.delete(name);
                states.push(new Map(model));
              }
              // A refused commit's checks must fail at some point of that order.
              settled.forEach((result, i) => {
                if (result.ok) return;
                assert.deepEqual(result, { ok: false });
                assert.ok(
                  states.some((state) => !holds(i, state)),
                  `commit ${i} was refused although its checks hold throughout`,
                );
              });
              // All or nothing per commit: the store holds exactly the model.
              const stored = await store.list({ prefix: [prefix] });
              assert.deepEqual(
                stored.map((e) => [e.key[1], e.value[0], e.version]),
                [...model].sort(([a], [b]) => a < b ? -1 : 1).map(([k, [v, ver]]) => [k, v, ver]),
              );
            },
          ),
          { numRuns: 30 },
        );
        assert.ok(groups() > 0, "the runs went through group calls");
      },
    );
  }

  test("of 20 commits racing on each of 10 keys, exactly one per key lands", async () => {
    const { store, groups } = open(4);
    const before = groups();
    const keys = Array.from({ length: 10 }, (_, k) => ["race", k]);
    const ops = keys.flatMap((key, k) =>
      Array.from({ length: 20 }, (_, j) => ({
        checks: [{ key, version: null }],
        set: [{ key, value: Uint8Array.of(k, j) }, {
          key: ["race-log", k, j],
          value: Uint8Array.of(1),
        }],
      }))
    );
    // Interleave the keys so every group holds commits on several keys.
    ops.sort((x, y) => x.set[0].value[1] - y.set[0].value[1]);
    const results = await Promise.all(ops.map((op) => store.commit(op)));
    assert.ok(groups() > before, "the race went through group calls");
    const stored = await store.getMany(keys);
    for (const [k, key] of keys.entries()) {
      const winners = results.flatMap((result, i) =>
        result.ok && ops[i].checks[0].key[1] === k ? [{ result, op: ops[i] }] : []
      );
      assert.equal(winners.length, 1, `key ${k}`);
      const [{ result, op }] = winners;
      assert.deepEqual(stored[k], { key, value: op.set[0].value, version: result.version });
    }
    const logs = await store.list({ prefix: ["race-log"] });
    assert.equal(logs.length, 10, "losers wrote nothing");
    const versions = results.flatMap((result) => result.ok ? [result.version] : []);
    assert.equal(
      new Set(versions).size,
      versions.length,
      "every landed commit has its own version",
    );
  });

  test("a commit the server refuses fails alone; the rest of its group lands", async () => {
    const { store, groups } = open(1);
    const admin = postgres(url, { max: 1, onnotice: () => {} });
    try {
      await admin.unsafe(
        `CREATE OR REPLACE FUNCTION poison() RETURNS trigger LANGUAGE plpgsql AS $$
         BEGIN RAISE EXCEPTION 'poisoned write'; END $$`,
      );
      await admin.unsafe(
        `CREATE TRIGGER poison BEFORE INSERT OR UPDATE ON floret_kv FOR EACH ROW
         WHEN (NEW.value = '\\xee'::bytea) EXECUTE FUNCTION poison()`,
      );
      const before = groups();
      // Commit 5 fails on its second write, commit 7 on its only one.
      const outcomes = await Promise.allSettled(
        Array.from({ length: 12 }, (_, i) =>
          store.commit({
            set: i === 7 ? [{ key: ["poison", i, "only"], value: Uint8Array.of(0xee) }] : [
              { key: ["poison", i, "first"], value: Uint8Array.of(i) },
              { key: ["poison", i, "second"], value: Uint8Array.of(i === 5 ? 0xee : i) },
            ],
          })),
      );
      assert.ok(groups() > before, "the commits went through a group call");
      outcomes.forEach((outcome, i) => {
        if (i === 5 || i === 7) {
          assert.equal(outcome.status, "rejected", `commit ${i}`);
          assert.ok(isFloretError(outcome.reason, "storage_failure"), String(outcome.reason));
        } else assert.ok(outcome.status === "fulfilled" && outcome.value.ok, `commit ${i}`);
      });
      const keys = (await store.list({ prefix: ["poison"] })).map((e) => e.key);
      assert.equal(keys.length, 20);
      assert.ok(!keys.some((key) => key[1] === 5 || key[1] === 7), "nothing of failed commits");
    } finally {
      await admin.unsafe("DROP TRIGGER IF EXISTS poison ON floret_kv");
      await admin.end();
    }
  });

  test("a sequential writer never groups", async () => {
    const { store, groups } = open(4);
    await store.getMany([["warm"]]);
    const before = groups();
    for (let i = 0; i < 20; i++) {
      assert.ok((await store.commit({ set: [{ key: ["seq", i], value: Uint8Array.of(i) }] })).ok);
    }
    assert.equal(groups(), before);
  });
});

describe("postgresStore schema 1 -> 2", { skip: skipBecause(import.meta.url, NO_POSTGRES) }, () => {
  test("a database of schema 1 is upgraded and then commits in groups", async () => {
    const url = await freshDatabase("upgrade");
    const first = postgresStore({ url });
    const old = await first.commit({ set: [{ key: ["old"], value: Uint8Array.of(1) }] });
    assert.ok(old.ok);
    await first.close();
    // Back to exactly what schema 1 had: no group function, version 1.
    const admin = postgres(url, { max: 1, onnotice: () => {} });
    await admin.unsafe(
      "DROP FUNCTION floret_kv_commit_many(int[], bytea[], bigint[], int[], bytea[], bytea[], int[], bytea[])",
    );
    await admin.unsafe(
      "UPDATE floret_kv SET value = convert_to('1', 'UTF8') WHERE key = '\\x00736368656d61'",
    );
    const store = postgresStore({ url, maxConnections: 1 });
    try {
      const results = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          store.commit({
            checks: [{ key: ["old"], version: old.version }],
            set: [{ key: ["new", i], value: Uint8Array.of(i) }],
          })),
      );
      assert.ok(results.every((result) => result.ok));
      assert.equal((await store.list({ prefix: ["new"] })).length, 30);
      assert.deepEqual((await store.getMany([["old"]]))[0]?.version, old.version);
      const [row] = await admin.unsafe(
        "SELECT convert_from(value, 'UTF8') AS schema FROM floret_kv WHERE key = '\\x00736368656d61'",
      );
      assert.equal(row.schema, "2");
      const [fn] = await admin.unsafe(
        "SELECT count(*)::int AS n FROM pg_proc WHERE proname = 'floret_kv_commit_many'",
      );
      assert.equal(fn.n, 1);
    } finally {
      await store.close();
      await admin.end();
    }
  });
});
