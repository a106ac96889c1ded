// The actor's lock (`exclusive`) when it is free: the command starts at once,
// yet commands asked for meanwhile — even from inside its synchronous part —
// still run one at a time, in order. And `ThreadActor.created` matches a load.
import { test } from "node:test";
import assert from "node:assert/strict";
import { memoryStore } from "@floret/engine";
import { Journal } from "../src/journal/journal.ts";
import type { ThreadRecord } from "../src/journal/thread_record.ts";
import { Publisher } from "../src/runtime/actor/publisher.ts";
import { ThreadActor } from "../src/runtime/actor/thread_actor.ts";
import { DEFAULT_HOST_ID, DEFAULT_LEASE_TTL_MS } from "../src/runtime/actor/ownership.ts";

const ownership = { hostId: DEFAULT_HOST_ID, leaseTtlMs: DEFAULT_LEASE_TTL_MS };

const fresh = (): ThreadRecord => ({
  id: "thread_lock",
  createdAt: "2026-12-01T00:00:00.000Z",
  updatedAt: "2026-12-01T00:00:00.000Z",
  seq: 0,
  status: "idle",
  queue: [],
  title: "Lock",
  titleStatus: "ready",
  titleGeneration: 1,
});

async function created(): Promise<{ journal: Journal; actor: ThreadActor; version: string }> {
  const journal = await Journal.open(memoryStore());
  const record = fresh();
  const version = await journal.commit({ expected: null, record });
  assert.ok(version);
  const actor = ThreadActor.created(journal, { record, version }, new Publisher(), ownership);
  return { journal, actor, version };
}

const tick = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 0));

test("a free lock runs the command at once; later ones wait for it to settle", async () => {
  const { actor } = await created();
  const log: string[] = [];
  let release!: () => void;
  const first = actor.exclusive(async () => {
    log.push("first starts");
    await new Promise<void>((resolve) => (release = resolve));
    log.push("first ends");
    return 1;
  });
  assert.deepEqual(log, ["first starts"]);
  const second = actor.exclusive(() => {
    log.push("second");
    return 2;
  });
  assert.equal(actor.quiet, false);
  await tick();
  assert.deepEqual(log, ["first starts"]);
  release();
  assert.deepEqual(await Promise.all([first, second]), [1, 2]);
  assert.deepEqual(log, ["first starts", "first ends", "second"]);
  assert.equal(actor.quiet, true);
});

test("a command asked for inside another's synchronous part runs after that one settles", async () => {
  const { actor } = await created();
  const log: string[] = [];
  let inner: Promise<string> | undefined;
  let release!: () => void;
  const outer = actor.exclusive(async () => {
    log.push("outer starts");
    inner = actor.exclusive(() => {
      log.push("inner");
      return "inner";
    });
    const another = actor.exclusive(() => log.push("another"));
    void another;
    await new Promise<void>((resolve) => (release = resolve));
    log.push("outer ends");
    return "outer";
  });
  await tick();
  assert.deepEqual(log, ["outer starts"]);
  release();
  assert.equal(await outer, "outer");
  assert.equal(await inner, "inner");
  await tick();
  assert.deepEqual(log, ["outer starts", "outer ends", "inner", "another"]);
  assert.equal(actor.quiet, true);
});

test("a command that throws at once rejects, and the lock is free again", async () => {
  const { actor } = await created();
  await assert.rejects(
    actor.exclusive(() => {
      throw new Error("boom");
    }),
    /boom/,
  );
  assert.equal(actor.quiet, true);
  assert.equal(await actor.exclusive(() => "next"), "next");
});

test("exclusiveNow: a command that finishes at once gives its value back and frees the lock in the same tick", async () => {
  const { actor } = await created();
  const log: string[] = [];
  let inner: Promise<string> | undefined;
  const value = actor.exclusiveNow(() => {
    log.push("outer");
    // Asked from inside the synchronous part: it waits for this command, then runs.
    inner = actor.exclusive(() => {
      log.push("inner");
      return "inner";
    });
    return "outer";
  });
  assert.equal(value, "outer");
  assert.deepEqual(log, ["outer"]);
  assert.equal(actor.quiet, false, "the command asked for meanwhile waits");
  assert.equal(await inner, "inner");
  assert.deepEqual(log, ["outer", "inner"]);
  assert.equal(actor.quiet, true);
  // Free again: the next one also finishes at once.
  assert.equal(actor.exclusiveNow(() => 3), 3);
  assert.equal(actor.quiet, true);
});

test("exclusiveNow waits behind a command in progress, keeps the lock for a promise, and rejects a throw", async () => {
  const { actor } = await created();
  const log: string[] = [];
  let release!: () => void;
  const first = actor.exclusive(async () => {
    await new Promise<void>((resolve) => (release = resolve));
    log.push("first");
  });
  const queued = actor.exclusiveNow(() => log.push("queued"));
  assert.ok(queued instanceof Promise, "a busy lock gives a promise");
  await tick();
  assert.equal(log.length, 0);
  release();
  await first;
  assert.equal(await queued, 2);
  assert.deepEqual(log, ["first", "queued"]);
  // A command that returns a promise holds the lock until it settles.
  let finish!: () => void;
  const slow = actor.exclusiveNow(() => new Promise<void>((resolve) => (finish = resolve)));
  assert.ok(slow instanceof Promise);
  const after = actor.exclusive(() => log.push("after"));
  await tick();
  assert.deepEqual(log, ["first", "queued"]);
  finish();
  await slow;
  await after;
  assert.deepEqual(log, ["first", "queued", "after"]);
  // A throw becomes a rejection, and the lock is free again.
  const thrown = actor.exclusiveNow(() => {
    throw new Error("boom");
  });
  await assert.rejects(Promise.resolve(thrown), /boom/);
  assert.equal(actor.quiet, true);
  assert.equal(actor.exclusiveNow(() => "next"), "next");
});

test("commitLanded on a synchronous store lands in the same tick; a stale commit reloads and rejects", async () => {
  const { journal, actor, version } = await created();
  const record = { ...actor.record, title: "Mine", updatedAt: "2026-12-01T00:00:02.000Z" };
  const landed = actor.exclusiveNow(() => actor.commitLanded({ record }));
  assert.equal(landed, undefined, "nothing to await");
  assert.equal(actor.record.title, "Mine");
  // Another writer moves the record: the next commit finds it stale.
  const moved = { ...actor.record, title: "Theirs", updatedAt: "2026-12-01T00:00:03.000Z" };
  assert.ok(await journal.commit({ expected: actor.versioned, record: moved }));
  assert.notEqual(actor.versioned.version, version);
  const stale = actor.exclusiveNow(() =>
    actor.commitLanded({ record: { ...actor.record, title: "Late" } })
  );
  assert.ok(stale instanceof Promise);
  await assert.rejects(stale, { name: "StaleThreadError" });
  assert.equal(actor.record.title, "Theirs", "the actor reloaded");
});

test("ThreadActor.created holds what a load reads back", async () => {
  const { journal, actor, version } = await created();
  const loaded = await ThreadActor.load(journal, "thread_lock", new Publisher(), ownership);
  assert.ok(loaded);
  assert.deepEqual(actor.versioned, loaded.versioned);
  assert.equal(actor.versioned.version, version);
  assert.equal(actor.lastSeq, loaded.lastSeq);
  assert.deepEqual(actor.snapshot(), loaded.snapshot());
});

test("ThreadActor.created refuses a record that has entries or a fork base", async () => {
  const journal = await Journal.open(memoryStore());
  const withEntries = { ...fresh(), seq: 3 };
  assert.throws(
    () =>
      ThreadActor.created(
        journal,
        { record: withEntries, version: "1" },
        new Publisher(),
        ownership,
      ),
    /must be loaded/,
  );
  const forked = { ...fresh(), base: { threadId: "thread_source", seq: 2 } };
  assert.throws(
    () =>
      ThreadActor.created(journal, { record: forked, version: "1" }, new Publisher(), ownership),
    /must be loaded/,
  );
});

test("sync keeps the record while its stored version holds, and reloads once another writer moved it", async () => {
  const { journal, actor, version } = await created();
  assert.equal(await journal.threadVersion("thread_lock"), version);
  assert.equal(await journal.threadVersion("thread_missing"), null);
  const held = actor.record;
  assert.equal(await actor.sync(), true);
  assert.equal(actor.record, held);
  const renamed = { ...held, title: "Renamed", updatedAt: "2026-12-01T00:00:01.000Z" };
  const next = await journal.commit({ expected: { record: held, version }, record: renamed });
  assert.ok(next);
  assert.equal(await actor.sync(), true);
  assert.equal(actor.record.title, "Renamed");
  assert.equal(actor.versioned.version, next);
});

test("a commit of an owned record stamps it in place: the same stored record, key for key, as the copy", async () => {
  const committed: string[] = [];
  for (const ownRecord of [false, true]) {
    const { journal, actor } = await created();
    const record: ThreadRecord = {
      ...actor.record,
      status: "running",
      active: { turnId: "turn_1", runId: "run_1" },
      updatedAt: "2026-12-01T00:00:05.000Z",
    };
    const given = record;
    await actor.exclusive(() =>
      actor.commit({
        record,
        entries: [
          { kind: "turn_started", turnId: "turn_1", runId: "run_1", agentId: "a", requestKey: "k" },
        ],
        ownRecord,
      })
    );
    assert.equal(actor.record === given, ownRecord, "stamped in place only when owned");
    const stored = await journal.thread("thread_lock");
    assert.ok(stored);
    // The lease's deadline is the clock's: everything else must match byte for byte.
    const { leaseUntil, ...active } = stored.record.active!;
    assert.equal(typeof leaseUntil, "number");
    committed.push(JSON.stringify({ ...stored.record, active }));
    assert.deepEqual(Object.keys(stored.record), Object.keys(actor.record));
  }
  assert.equal(committed[0], committed[1]);
});
