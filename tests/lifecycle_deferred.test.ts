// Deferred start (issue 15): a host opened with `deferExecution: true` reads
// and keeps books, but every command that would start a run answers
// `execution_deferred` until `activate()`; `onStartup` reports its phases.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import {
  defineAgent,
  FloretError,
  type KvStore,
  memoryStore,
  openHost,
  type ThreadService,
} from "@floret/engine";
import { scriptedGateway, type ScriptStep } from "@floret/engine/testing";
import { FAST_RETRY } from "./support/engine.ts";
import { writeTool } from "./support/interactions.ts";

const isCode = (code: string) => (error: unknown) =>
  error instanceof FloretError && error.code === code;

/** A store that outlives the hosts opened on it. */
function sharedStore(): KvStore {
  const store = memoryStore();
  return { ...store, close: async () => {} };
}

function serviceOf(host: Awaited<ReturnType<typeof openHost>>, steps: ScriptStep[]) {
  const gateway = scriptedGateway(steps);
  const threads: ThreadService = host.threads({
    agent: defineAgent({ id: "a", systemPrompt: "x", gateway, providerRetry: FAST_RETRY }),
  });
  return { threads, gateway };
}

/** A store with one idle thread (a completed turn, then a failed one) and one left running. */
async function seededStore() {
  const store = sharedStore();
  const host = await openHost({ store });
  const { threads } = serviceOf(host, [
    { text: "First answer." },
    { error: { retry: "never", message: "down" } },
    { hang: true },
  ]);
  const idle = (await threads.create({ requestKey: "idle" })).threadId;
  await threads.send({ threadId: idle, requestKey: "i1", input: { text: "one" } });
  await threads.waitForIdle(idle, { timeoutMs: 5_000 });
  await threads.send({ threadId: idle, requestKey: "i2", input: { text: "two" } });
  await threads.waitForIdle(idle, { timeoutMs: 5_000 });
  const busy = (await threads.create({ requestKey: "busy" })).threadId;
  await threads.send({ threadId: busy, requestKey: "b1", input: { text: "hangs" } });
  await host.shutdown(); // the hanging turn stays unfinished in the store
  return { store, idle, busy };
}

describe("deferred execution", () => {
  test("reads work; commands that would run answer execution_deferred without using their key", async () => {
    const { store, idle, busy } = await seededStore();
    const phases: string[] = [];
    const host = await openHost({
      store,
      deferExecution: true,
      onStartup: (phase) => phases.push(phase),
    });
    assert.deepEqual(phases, ["verifying"]); // no migration runs (DESIGN §11)
    const { threads, gateway } = serviceOf(host, [{ text: "After activation." }]);

    // Reads.
    const view = await threads.view(idle);
    assert.equal(view.turns.length, 2);
    assert.ok((await threads.list()).threads.length >= 2);
    assert.equal((await threads.history(idle)).items[0].text, "one");
    assert.equal((await threads.context(idle)).windowTokens >= 0, true);
    // The turn the previous process left is not settled while deferred.
    assert.equal((await threads.view(busy)).status, "running");

    // Commands that would start execution.
    await assert.rejects(
      threads.send({ threadId: idle, requestKey: "s", input: { text: "go" } }),
      isCode("execution_deferred"),
    );
    await assert.rejects(
      threads.retry({ threadId: idle, requestKey: "r" }),
      isCode("execution_deferred"),
    );

    // Bookkeeping that starts nothing.
    const created = await threads.create({ requestKey: "new" });
    await threads.setTitle({ threadId: idle, requestKey: "t", title: "Kept" });
    const forked = await threads.fork({ threadId: idle, requestKey: "f" });
    assert.equal(forked.view.status, "idle");
    const queued = await threads.send({
      threadId: busy,
      requestKey: "q",
      input: { text: "later" },
    });
    assert.equal(
      queued.queued,
      true,
      "input for a busy thread queues; it runs only after activation",
    );
    await threads.delete({ threadId: created.threadId, requestKey: "d" });
    const compacted = await threads.compact({ threadId: idle, requestKey: "c" });
    assert.equal(compacted.outcome, "noop");
    // A replay is answered from the journal: nothing runs.
    const replay = await threads.send({
      threadId: busy,
      requestKey: "q",
      input: { text: "later" },
    });
    assert.equal(replay.queued, true);
    assert.equal(gateway.requests.length, 0);

    // A wait begun while deferred ends once activation settles the leftover turn.
    // (Its own timeout is far away; a generous bound below tells "woken" from "timed out".)
    const waiting = threads.waitForIdle(busy, { timeoutMs: 60_000 });
    await host.activate();
    await host.activate(); // idempotent
    let bound: ReturnType<typeof setTimeout> | undefined;
    const woken = await Promise.race([
      waiting.then((v) => v.status),
      new Promise<string>((resolve) => (bound = setTimeout(() => resolve("not woken"), 5_000))),
    ]);
    clearTimeout(bound);
    assert.equal(woken, "idle");
    // Activation settled the turn the previous process left.
    const settled = await threads.view(busy);
    assert.equal(settled.status, "idle");
    assert.equal(settled.turns[0].failure?.code, "interrupted");
    assert.equal(settled.queue.length, 1, "queued input stays queued after an interrupted turn");

    // The same key, refused before, now admits.
    const sent = await threads.send({ threadId: idle, requestKey: "s", input: { text: "go" } });
    assert.equal(sent.queued, false);
    const done = await threads.waitForIdle(idle, { timeoutMs: 5_000 });
    assert.equal(done.turns.at(-1)?.outcome, "completed");
    assert.equal(done.title, "Kept");
    assert.equal(gateway.requests.length, 1);
    await host.shutdown();
  });

  test("respond that would start a run is deferred without using its key; after activate it runs", async () => {
    const store = sharedStore();
    const ran: string[] = [];
    const agentWith = (steps: ScriptStep[]) =>
      defineAgent({
        id: "a",
        systemPrompt: "x",
        gateway: scriptedGateway(steps),
        tools: [writeTool(ran)],
        providerRetry: FAST_RETRY,
      });
    const first = await openHost({ store });
    const live = first.threads({
      agent: agentWith([{ toolCalls: [{ name: "write", arguments: { line: "x" } }] }]),
    });
    const { threadId } = await live.create({ requestKey: "t" });
    await live.send({ threadId, requestKey: "s", input: { text: "write" } });
    const waiting = await live.waitForIdle(threadId, { timeoutMs: 5_000 });
    assert.equal(waiting.status, "waiting");
    const interactionId = waiting.pending[0].id;
    await first.shutdown();

    const host = await openHost({ store, deferExecution: true });
    const threads = host.threads({ agent: agentWith([{ text: "Written." }]) });
    const answer = { threadId, requestKey: "ok", interactionId, decision: "approve" as const };
    await assert.rejects(threads.respond(answer), isCode("execution_deferred"));
    const still = await threads.view(threadId);
    assert.equal(still.status, "waiting");
    assert.equal(still.pending.length, 1, "nothing was recorded");
    assert.deepEqual(ran, []);

    await host.activate();
    // The same request key works now: the deferred attempt did not use it.
    await threads.respond(answer);
    const done = await threads.waitForIdle(threadId, { timeoutMs: 5_000 });
    assert.equal(done.turns[0].outcome, "completed");
    assert.deepEqual(ran, ["x"]);
    await host.shutdown();
  });

  test("promoteQueued is deferred; cancel is not (it starts nothing)", async () => {
    const { store, busy } = await seededStore();
    const host = await openHost({ store, deferExecution: true });
    const { threads } = serviceOf(host, []);
    const queued = await threads.send({
      threadId: busy,
      requestKey: "q",
      input: { text: "later" },
    });
    const queueId = queued.view.queue[0].id;
    await assert.rejects(
      threads.promoteQueued({ threadId: busy, requestKey: "p", queueId }),
      isCode("execution_deferred"),
    );
    const cancelled = await threads.cancel({ threadId: busy, requestKey: "x" });
    assert.equal(cancelled.view.status, "idle");
    assert.equal(cancelled.view.turns[0].outcome, "cancelled");
    await host.shutdown();
  });

  test("a host opened normally settles at open, reports its phases, and activate() resolves at once", async () => {
    const { store, busy } = await seededStore();
    const phases: string[] = [];
    const host = await openHost({ store, onStartup: (phase) => phases.push(phase) });
    assert.deepEqual(phases, ["verifying"]); // no migration runs (DESIGN §11)
    const { threads } = serviceOf(host, []);
    assert.equal((await threads.view(busy)).turns[0].failure?.code, "interrupted");
    await host.activate();
    await assert.rejects(host.prepareRestore(), isCode("invalid_input"));
    await host.shutdown();
    await assert.rejects(host.activate(), isCode("host_closed"));
  });

  test("bad lifecycle options are invalid_input; a throwing onStartup does not stop the open", async () => {
    await assert.rejects(
      openHost({ store: memoryStore(), deferExecution: "yes" as unknown as boolean }),
      isCode("invalid_input"),
    );
    await assert.rejects(
      openHost({ store: memoryStore(), onStartup: 3 as unknown as () => void }),
      isCode("invalid_input"),
    );
    const host = await openHost({
      store: memoryStore(),
      onStartup: () => {
        throw new Error("host bug");
      },
    });
    await host.shutdown();
  });
});
