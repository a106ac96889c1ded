// The lease keeper's timer across runs: leases are renewed while a run lives,
// including a run that starts after the keeper went idle (its timer only
// unreferenced, or cleared, in between); once no run is left, the timer
// renews nothing and goes at its next tick; `stop` ends it at once.
import { test } from "node:test";
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import assert from "node:assert/strict";
import type { ActorCache } from "../src/runtime/turns/actor_cache.ts";
import { LeaseKeeper } from "../src/runtime/host/lease_keeper.ts";
import { stampLease } from "../src/runtime/actor/ownership.ts";
import type { ThreadRecord } from "../src/journal/thread_record.ts";
import type { ThreadActor } from "../src/runtime/actor/thread_actor.ts";

/** An actor cache whose one thread runs with a lease about to lapse; counts the keeper's looks and renewals. */
function fakeActors(): { actors: ActorCache; looks: () => number; renewals: () => number } {
  let looks = 0;
  let renewals = 0;
  const actor = {
    run: {},
    get record() {
      return { active: { turnId: "t", runId: "r", owner: "default", leaseUntil: 0 } };
    },
    exclusive(fn: () => unknown) {
      return Promise.resolve(fn());
    },
    commit() {
      renewals++;
      return Promise.resolve();
    },
  } as unknown as ThreadActor;
  const actors = {
    all() {
      looks++;
      return [actor];
    },
  } as unknown as ActorCache;
  return { actors, looks: () => looks, renewals: () => renewals };
}

/** Waits until `done()` holds, giving the 10 ms timer (a 30 ms lease) ample ticks. */
async function until(done: () => boolean): Promise<void> {
  for (let i = 0; i < 4000 && !done(); i++) await new Promise((r) => setTimeout(r, 5));
  assert.ok(done(), "the condition never held");
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

test("leases are renewed while runs live, again after an idle spell, and never while none runs", async () => {
  const { actors, looks, renewals } = fakeActors();
  const keeper = new LeaseKeeper(actors, { hostId: "default", leaseTtlMs: 30 });
  try {
    keeper.runStarted();
    await until(() => renewals() >= 2);
    keeper.runEnded();
    // Idle: whatever tick comes renews nothing and stops the timer.
    await sleep(60);
    const idleLooks = looks();
    const idleRenewals = renewals();
    await sleep(60);
    assert.equal(looks(), idleLooks, "an idle keeper looks at no actor");
    assert.equal(renewals(), idleRenewals);
    // A run after the idle spell is kept again.
    keeper.runStarted();
    await until(() => renewals() >= idleRenewals + 2);
    // Two runs: the end of one keeps the other's lease going.
    keeper.runStarted();
    keeper.runEnded();
    const before = renewals();
    await until(() => renewals() >= before + 2);
    keeper.runEnded();
  } finally {
    keeper.stop();
  }
});

test("a run that starts right after the last one ended keeps its lease (the timer is referenced again)", async () => {
  const { actors, renewals } = fakeActors();
  const keeper = new LeaseKeeper(actors, { hostId: "default", leaseTtlMs: 30 });
  try {
    for (let i = 0; i < 5; i++) {
      keeper.runStarted();
      keeper.runEnded();
    }
    keeper.runStarted();
    await until(() => renewals() >= 2);
  } finally {
    keeper.stop();
  }
});

test("stop ends the timer at once, runs or not", async () => {
  const { actors, looks } = fakeActors();
  const keeper = new LeaseKeeper(actors, { hostId: "default", leaseTtlMs: 30 });
  keeper.runStarted();
  await until(() => looks() >= 1);
  keeper.stop();
  const stopped = looks();
  await sleep(60);
  assert.equal(looks(), stopped);
});

test("a host left open after its runs ended does not keep the process alive", async () => {
  const child = fileURLToPath(new URL("./support/idle_host_child.ts", import.meta.url));
  const [cmd, argv]: [string, string[]] = "Deno" in globalThis
    ? [process.execPath, ["run", "-A", child]]
    : "Bun" in globalThis
    ? [process.execPath, [child]]
    : [process.execPath, ["--import", "tsx", child]];
  const proc = spawn(cmd, argv, { stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  proc.stdout.on("data", (chunk) => (stdout += chunk));
  proc.stderr.on("data", (chunk) => (stderr += chunk));
  // The lease timer ticks every 10 s (the default 30 s lease): a process it held would still
  // run long after this; one that ends by itself is gone within a few seconds.
  let killed = false;
  const guard = setTimeout(() => {
    killed = true;
    proc.kill("SIGKILL");
  }, 8_000);
  const code = await new Promise<number | null>((resolve) => proc.on("close", resolve));
  clearTimeout(guard);
  assert.equal(stdout.trim(), "idle", stderr);
  assert.equal(killed, false, "the idle host kept its process alive");
  assert.equal(code, 0, stderr);
});

test("stampLease gives the keys, order and values of `{ ...active, owner, leaseUntil }`, in a new object", () => {
  const ownership = { hostId: "host_a", leaseTtlMs: 30_000 };
  const actives = [
    { turnId: "t", runId: "r" },
    { turnId: "t", runId: "r", owner: "host_a", leaseUntil: 5 },
    { leaseUntil: 5, turnId: "t", owner: "host_a", runId: "r" },
  ];
  for (const active of actives) {
    const record = { id: "thread_1", active } as unknown as ThreadRecord;
    const stamped = stampLease(record, ownership, 1_000);
    assert.equal(stamped, record, "stamped in place");
    assert.notEqual(record.active, active, "the active mark is a new object");
    assert.equal(
      JSON.stringify(record.active),
      JSON.stringify({ ...active, owner: "host_a", leaseUntil: 31_000 }),
    );
  }
  // Another host's live turn is left as it is.
  const theirs = { turnId: "t", runId: "r", owner: "host_b", leaseUntil: 99_999 };
  const record = { id: "thread_1", active: theirs } as unknown as ThreadRecord;
  stampLease(record, ownership, 1_000);
  assert.equal(record.active, theirs);
});
