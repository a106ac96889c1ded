// The actor's lock (`exclusive`) when it is free: the command starts at once,
// yet commands asked for meanwhile — even from inside its synchronous part —
// still run one at a time, in order. And `ThreadActor.created` matches a load.
import { test } from "node:test";
import assert from "node:assert/strict";
import { memoryStore } from "@floret/engine";
import { Journal } from "../src/journal/journal.ts";
import type { ThreadRecord } from "../src/journal/thread_record.ts";
import { Publisher } from "../src/runtime/publisher.ts";
import { ThreadActor } from "../src/runtime/thread_actor.ts";
import { DEFAULT_HOST_ID, DEFAULT_LEASE_TTL_MS } from "../src/runtime/ownership.ts";

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
