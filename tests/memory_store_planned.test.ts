// The journal's internal planned-commit path into memoryStore: it must leave
// exactly the bytes, versions and refusals of the public `commit` path.
import { test } from "node:test";
import assert from "node:assert/strict";
import { memoryStore } from "@floret/engine";
import type { KvEntry, KvStore } from "@floret/engine/spi";
import { Journal } from "../src/journal/journal.ts";
import type { ThreadRecord } from "../src/journal/thread_record.ts";
import { planOwnedCommit } from "../src/spi/kv_commit_plan.ts";
import { encodeKey } from "../src/spi/key_codec.ts";
import { PLANNED_COMMIT, plannedCommitOf, plannedVersionOf } from "../src/spi/kv_planned_commit.ts";

/** The same store seen only through the public SPI (no planned path). */
function publicOnly(store: KvStore): KvStore {
  return {
    getMany: (keys) => store.getMany(keys),
    list: (selector, options) => store.list(selector, options),
    commit: (op) => store.commit(op),
    close: () => store.close(),
  };
}

const record = (seq: number, updatedAt: string, active: boolean): ThreadRecord => ({
  id: "t1",
  createdAt: "2026-12-01T00:00:00.000Z",
  updatedAt,
  seq,
  status: active ? "running" : "idle",
  ...(active ? { active: { turnId: "u1", runId: "r1" } } : {}),
  queue: [],
});

async function scenario(store: KvStore): Promise<{ rows: KvEntry[]; versions: unknown[] }> {
  const journal = await Journal.open(store);
  const versions: unknown[] = [];
  const first = record(0, "2026-12-01T00:00:01.000Z", false);
  const created = await journal.commit({
    expected: null,
    record: first,
    request: { scope: "", key: "create-1", value: { op: "create", fingerprint: "f", result: {} } },
    set: [{ key: ["fork", "s", "t1"], value: { note: "extra" } }],
  });
  versions.push(created);
  const second = record(1, "2026-12-01T00:00:02.000Z", true);
  const admitted = await journal.commit({
    expected: { record: first, version: created! },
    record: second,
    entries: [{ kind: "steer", seq: 1, at: "2026-12-01T00:00:02.000Z", text: "hi" } as never],
    delete: [["fork", "s", "t1"]],
  });
  versions.push(admitted);
  // An append under a stale version is refused and changes nothing.
  versions.push(
    await journal.commit({
      expected: { record: first, version: created! },
      record: null,
      entries: [{ kind: "steer", seq: 2, at: "2026-12-01T00:00:03.000Z", text: "x" } as never],
    }),
  );
  // A bad extra key is bad input before anything is written.
  await assert.rejects(
    journal.commit({
      expected: { record: second, version: admitted! },
      record: null,
      entries: [{ kind: "steer", seq: 2, at: "2026-12-01T00:00:03.000Z", text: "x" } as never],
      set: [{ key: [{}] as never, value: 1 }],
    }),
    (error: { code?: string }) => error.code === "invalid_input",
  );
  // A key written twice is refused the same way.
  await assert.rejects(
    journal.commit({
      expected: { record: second, version: admitted! },
      record: null,
      set: [{ key: ["x"], value: 1 }, { key: ["x"], value: 2 }],
    }),
    (error: { code?: string }) => error.code === "invalid_input",
  );
  versions.push(
    await journal.commit({
      expected: { record: second, version: admitted! },
      record: null,
      entries: [{ kind: "steer", seq: 2, at: "2026-12-01T00:00:03.000Z", text: "ok" } as never],
    }),
  );
  return { rows: await store.list({ prefix: [] }), versions };
}

test("memoryStore offers the planned path; a public-only view of it does not", () => {
  const store = memoryStore();
  assert.equal(typeof plannedCommitOf(store), "function");
  assert.equal(plannedCommitOf(publicOnly(store)), undefined);
  assert.equal(Object.keys(store).includes(String(PLANNED_COMMIT)), false);
  // A spread copies the symbol too: a wrapper that replaces commit must not be bypassed,
  // one that keeps it (only close replaced) may keep the path.
  const wrapped: KvStore = { ...store, commit: (op) => store.commit(op) };
  assert.equal(plannedCommitOf(wrapped), undefined);
  assert.equal(typeof plannedCommitOf({ ...store, close: () => Promise.resolve() }), "function");
});

test("a wrapper made by spreading the store and replacing commit sees every engine commit", async () => {
  const { openHost, defineAgent } = await import("@floret/engine");
  const { scriptedGateway } = await import("@floret/engine/testing");
  const inner = memoryStore();
  let seen = 0;
  const counting: KvStore = {
    ...inner,
    commit: (op) => {
      seen++;
      return inner.commit(op);
    },
  };
  const host = await openHost({ store: counting });
  const threads = host.threads({
    agent: defineAgent({ id: "a", systemPrompt: "s", gateway: scriptedGateway([{ text: "ok" }]) }),
  });
  const { threadId } = await threads.create({ requestKey: "c" });
  const before = seen;
  await threads.send({ threadId, requestKey: "s", input: { text: "hi" } });
  await threads.waitForIdle(threadId);
  assert.ok(seen > before, "the wrapper's commit saw the turn's commits");
  await host.shutdown();
});

test("journal commits through the planned path leave the same rows, versions and refusals as through commit", async () => {
  const fast = await scenario(memoryStore());
  const plain = await scenario(publicOnly(memoryStore()));
  assert.deepEqual(fast, plain);
  assert.equal(fast.versions[2], null);
  assert.ok(fast.rows.some((row) => row.key[0] === "entry" && row.key[2] === 2));
  assert.ok(!fast.rows.some((row) => row.key[0] === "fork"));
});

test("a planned commit checks versions and deletes like commit, and takes the plan's buffers", async () => {
  const store = memoryStore();
  const planned = plannedCommitOf(store)!;
  const value = new Uint8Array([1, 2]);
  const first = planned(planOwnedCommit({
    checks: [{ key: ["a"], version: null }],
    set: [{ key: ["a"], value }, { key: ["b"], value: new Uint8Array([3]) }],
  }));
  assert.equal(first.ok, true);
  const [stored] = await store.getMany([["a"]]);
  assert.deepEqual(stored?.value, new Uint8Array([1, 2]));
  assert.equal(stored?.version, (first as { version: string }).version);
  // Refused check: nothing written, nothing deleted.
  const refused = planned(planOwnedCommit({
    checks: [{ key: ["a"], version: null }],
    delete: [["b"]],
  }));
  assert.deepEqual(refused, { ok: false });
  assert.equal((await store.list({ prefix: [] })).length, 2);
  const second = planned(planOwnedCommit({
    checks: [{ key: ["a"], version: stored!.version }],
    delete: [["b"]],
  }));
  assert.equal(second.ok, true);
  assert.deepEqual((await store.list({ prefix: [] })).map((row) => row.key), [["a"]]);
  // Readers still get copies: changing what they read changes nothing stored.
  const [read] = await store.getMany([["a"]]);
  read!.value[0] = 9;
  assert.deepEqual((await store.getMany([["a"]]))[0]?.value, new Uint8Array([1, 2]));
  await store.close();
  assert.throws(
    () => planned(planOwnedCommit({ set: [{ key: ["c"], value }] })),
    (error: { code?: string }) => error.code === "storage_failure",
  );
});

test("a planned text value is stored as its UTF-8 bytes, and every read gets its own copy", async () => {
  const store = memoryStore();
  const planned = plannedCommitOf(store)!;
  const text = '{"text":"héllo ✓ \uD800 😀"}';
  const result = planned({
    checks: [{ key: encodeKey(["t"]), version: null }],
    writes: [{ key: encodeKey(["t"]), value: text }, { key: encodeKey(["e"]), value: "" }],
  });
  assert.equal(result.ok, true);
  const expected = new TextEncoder().encode(text);
  const [first] = await store.getMany([["t"]]);
  assert.deepEqual(first?.value, expected);
  first!.value[0] = 0;
  const [marker, valued] = await store.list({ start: ["e"], end: ["u"] });
  assert.deepEqual(marker.key, ["e"]);
  assert.deepEqual(valued.key, ["t"]);
  assert.deepEqual(marker.value, new Uint8Array());
  assert.deepEqual(valued.value, expected);
  assert.equal(valued.version, (result as { version: string }).version);
  await store.close();
});

test("planOwnedCommit rejects what planCommit rejects and shares the caller's values", () => {
  const value = new Uint8Array([7]);
  const plan = planOwnedCommit({ set: [{ key: ["k"], value }] });
  assert.equal(plan.writes[0].value, value);
  assert.throws(
    () => planOwnedCommit({ set: [{ key: ["k"], value: "no" as never }] }),
    (error: { code?: string }) => error.code === "invalid_input",
  );
  assert.throws(
    () => planOwnedCommit({ set: [{ key: ["k"], value }], delete: [["k"]] }),
    (error: { code?: string }) => error.code === "invalid_input",
  );
});

test("a journal commit on a closed store rejects with storage_failure on both paths", async () => {
  for (const store of [memoryStore(), publicOnly(memoryStore())]) {
    const journal = await Journal.open(store);
    await store.close();
    await assert.rejects(
      journal.commit({ expected: null, record: record(0, "2026-12-01T00:00:01.000Z", false) }),
      (error: { code?: string; message?: string }) =>
        error.code === "storage_failure" && /closed/.test(error.message ?? ""),
    );
  }
});

test("commitNow lands a thread commit in the same tick only on a synchronous store", async () => {
  const journal = await Journal.open(memoryStore());
  assert.equal(journal.commitsNow, true);
  const first = record(0, "2026-12-01T00:00:01.000Z", false);
  const version = journal.commitNow({ expected: null, record: first });
  assert.equal(typeof version, "string");
  assert.equal((await journal.thread("t1"))?.version, version);
  // A stale check is a refusal (null), not an error.
  assert.equal(journal.commitNow({ expected: null, record: first }), null);
  const plain = await Journal.open(publicOnly(memoryStore()));
  assert.equal(plain.commitsNow, false);
  assert.throws(
    () => plain.commitNow({ expected: null, record: first }),
    (error: { code?: string }) => error.code === "internal",
  );
});

test("the planned version read answers as getMany does, closed store included; a replaced getMany disables it", async () => {
  const store = memoryStore();
  const version = plannedVersionOf(store);
  assert.ok(version, "memoryStore offers the version read");
  assert.equal(version(["a", 1]), null);
  const committed = await store.commit({
    set: [{ key: ["a", 1], value: new TextEncoder().encode("{}") }],
  });
  assert.ok(committed.ok);
  const [entry] = await store.getMany([["a", 1]]);
  assert.equal(version(["a", 1]), entry!.version);
  assert.equal(version(["a", 1]), committed.version);
  assert.equal(version(["a", 2]), null);
  assert.throws(() => version([{} as never]), { code: "invalid_input" });
  await assert.rejects(store.getMany([[{} as never]]), { code: "invalid_input" });

  const wrapped: KvStore = { ...store, getMany: (keys) => store.getMany(keys) };
  assert.equal(plannedVersionOf(wrapped), undefined);
  assert.equal(plannedVersionOf(publicOnly(store)), undefined);

  // Through the journal: the same version either way, and storage_failure once closed.
  const direct = await Journal.open(store);
  const viaWrapper = await Journal.open(wrapped);
  await direct.commit({ expected: null, record: record(0, "2026-12-01T00:00:01.000Z", false) });
  const current = await direct.thread("t1");
  assert.equal(await direct.threadVersion("t1"), current!.version);
  assert.equal(await viaWrapper.threadVersion("t1"), current!.version);
  assert.equal(await direct.threadVersion("t2"), null);
  await store.close();
  assert.throws(() => version(["a", 1]));
  await assert.rejects(direct.threadVersion("t1"), { code: "storage_failure" });
  await assert.rejects(viaWrapper.threadVersion("t1"), { code: "storage_failure" });
});

test("a thread commit's plan carries every key's map id", async () => {
  const { planOf } = await import("../src/journal/commit_writer.ts");
  const { bytesToMapKey } = await import("../src/spi/kv_commit_plan.ts");
  const first = record(0, "2026-12-01T00:00:01.000Z", false);
  const entries = [1, 2, 255, 256, 65_537, 2 ** 40].map((seq) =>
    ({ kind: "steer", seq, at: "2026-12-01T00:00:02.000Z", text: "x" }) as never
  );
  const plan = planOf({
    expected: { record: first, version: "1" },
    record: record(7, "2026-12-01T00:00:02.000Z", true),
    entries,
    request: { scope: "t1", key: "send-1", value: { op: "send", fingerprint: "f", result: {} } },
  });
  // The record's and the request's check and write, one per entry, and three markers (the
  // old updated one removed, the new one and the active one set).
  assert.equal(plan.checks.length + plan.writes.length, 7 + entries.length);
  for (const item of [...plan.checks, ...plan.writes]) {
    assert.equal(item.id, bytesToMapKey(item.key));
  }
  // Markers are empty text (zero bytes), the request's check and write share one key.
  assert.ok(plan.writes.some((write) => write.value === ""));
  const request = encodeKey(["req", "t1", "send-1"]);
  assert.deepEqual(plan.checks.at(-1)?.key, request);
  assert.ok(plan.writes.some((write) => bytesToMapKey(write.key) === bytesToMapKey(request)));
});

test("an append's plan is the plan the general path makes of it", async () => {
  const { planOf } = await import("../src/journal/commit_writer.ts");
  const expected = { record: record(3, "2026-12-01T00:00:02.000Z", true), version: "v3" };
  for (const count of [0, 1, 2, 3]) {
    const entries = Array.from(
      { length: count },
      (_, i) =>
        ({ kind: "steer", seq: 4 + i, at: "2026-12-01T00:00:03.000Z", text: `m${i}` }) as never,
    );
    const append = planOf({ expected, record: null, entries });
    // An empty extra list sends the same change down the general path.
    const general = planOf({ expected, record: null, entries, set: [] });
    assert.deepEqual(append, general);
    assert.equal(append.writes.length, count);
    assert.equal(append.checks[0].version, "v3");
  }
});

test("an entry's key made on read is still checked against the commit's other keys", async () => {
  const { planOf } = await import("../src/journal/commit_writer.ts");
  const { checkedOwnPlan } = await import("../src/spi/kv_commit_plan.ts");
  const expected = { record: record(3, "2026-12-01T00:00:02.000Z", true), version: "v3" };
  const entries = [{ kind: "steer", seq: 4, at: "2026-12-01T00:00:03.000Z", text: "m" } as never];
  const plan = planOf({ expected, record: null, entries });
  assert.deepEqual(plan.writes[0].key, encodeKey(["entry", "t1", 4]));
  assert.equal(checkedOwnPlan(plan), plan);
  // An extra write to the same key as the entry is a key written twice.
  assert.throws(
    () =>
      checkedOwnPlan(
        planOf({ expected, record: null, entries, set: [{ key: ["entry", "t1", 4], value: 1 }] }),
      ),
    (error: { code?: string }) => error.code === "invalid_input",
  );
});

test("a deferred JSON value is stored as the UTF-8 bytes of its text, made once at the first read", async () => {
  const store = memoryStore();
  const planned = plannedCommitOf(store)!;
  let made = 0;
  const deferred = {
    json: () => {
      made++;
      return '{"kind":"steer","text":"é"}';
    },
  };
  const result = planned({ checks: [], writes: [{ key: encodeKey(["d"]), value: deferred }] });
  assert.equal(made, 0);
  const expected = new TextEncoder().encode('{"kind":"steer","text":"é"}');
  const [first] = await store.getMany([["d"]]);
  assert.deepEqual(first?.value, expected);
  first!.value[0] = 0;
  const [listed] = await store.list({ prefix: [] });
  assert.deepEqual(listed.value, expected);
  assert.equal(listed.version, (result as { version: string }).version);
  assert.equal(made, 1);
  await store.close();
});

test("an entry's and a record's planned values are deferred: their text is their JSON", async () => {
  const { planOf } = await import("../src/journal/commit_writer.ts");
  const { encodeText } = await import("../src/journal/codec.ts");
  const expected = { record: record(3, "2026-12-01T00:00:02.000Z", true), version: "v3" };
  const entry = { kind: "steer", seq: 4, at: "2026-12-01T00:00:03.000Z", text: "m" } as never;
  const [write] = planOf({ expected, record: null, entries: [entry] }).writes;
  assert.equal(typeof write.value, "object");
  assert.ok(!(write.value instanceof Uint8Array));
  assert.equal((write.value as { json(): string }).json(), encodeText(entry));
  // A commit's thread record likewise; the request's value stays eager text (a caller gets its result).
  const next = record(4, "2026-12-01T00:00:04.000Z", true);
  const plan = planOf({
    expected,
    record: next,
    request: { scope: "t1", key: "k", value: { op: "send", fingerprint: "f", result: {} } },
  });
  const deferred = plan.writes.filter((w) => typeof w.value === "object" && w.value !== null);
  assert.equal(deferred.length, 1);
  assert.equal((deferred[0].value as { json(): string }).json(), encodeText(next));
  assert.ok(
    plan.writes.some((w) => w.value === encodeText({ op: "send", fingerprint: "f", result: {} })),
  );
});

test("checkedOwnPlan finds a key written twice by ids when every write has one, else by bytes", async () => {
  const { checkedOwnPlan, bytesToMapKey } = await import("../src/spi/kv_commit_plan.ts");
  const written = (n: number, withIds: boolean, repeat?: [number, number]) => ({
    writes: Array.from({ length: n }, (_, i) => {
      const key = encodeKey(["k", repeat && i === repeat[1] ? repeat[0] : i]);
      return withIds ? { key, id: bytesToMapKey(key), value: "" } : { key, value: "" };
    }),
  });
  for (const n of [2, 16, 17, 40]) {
    for (const withIds of [true, false]) {
      const plan = written(n, withIds);
      assert.equal(checkedOwnPlan(plan), plan);
      assert.throws(
        () => checkedOwnPlan(written(n, withIds, [0, n - 1])),
        (error: { code?: string }) => error.code === "invalid_input",
      );
    }
  }
  // One of the two writes to a key without an id: the bytes are compared.
  const mixed = written(3, true, [0, 2]);
  delete (mixed.writes[2] as { id?: string }).id;
  assert.throws(
    () => checkedOwnPlan(mixed),
    (error: { code?: string }) => error.code === "invalid_input",
  );
});
