/**
 * Behaviour of the runtime's shared pieces, through the public API: the one
 * bounded stale-write retry, the one turn admission (also used by the queue
 * hand-over) and the one place each turn event is emitted.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import {
  type Agent,
  defineAgent,
  defineTool,
  FloretError,
  type KvCommit,
  type KvStore,
  memoryStore,
  type ObservationEvent,
  openHost,
} from "@floret/engine";
import { scriptedGateway } from "@floret/engine/testing";
import { deferred, FAST_RETRY } from "./support/engine.ts";

/** A memory store whose thread commits can be made to lose their race on demand. */
function racingStore(): { store: KvStore; refuse: { on: boolean; count: number } } {
  const inner = memoryStore();
  const refuse = { on: false, count: 0 };
  const store: KvStore = {
    getMany: (keys) => inner.getMany(keys),
    list: (selector, options) => inner.list(selector, options),
    close: () => inner.close(),
    commit: (op: KvCommit) => {
      const checksThread = op.checks?.some((check) => check.key[0] === "thread") ?? false;
      if (refuse.on && checksThread) {
        refuse.count++;
        return Promise.resolve({ ok: false });
      }
      return inner.commit(op);
    },
  };
  return { store, refuse };
}

function isCode(code: string): (error: unknown) => boolean {
  return (error) => {
    assert.ok(error instanceof FloretError, `expected a FloretError, got ${String(error)}`);
    assert.equal(error.code, code, error.message);
    return true;
  };
}

describe("runtime shape", () => {
  test("a write that keeps losing its race ends in storage_failure after 8 re-plans, yielding meanwhile", async () => {
    const { store, refuse } = racingStore();
    const host = await openHost({ store });
    const gateway = scriptedGateway([{ text: "after the race" }]);
    const threads = host.threads({ agent: defineAgent({ id: "a", systemPrompt: "s", gateway }) });
    const { threadId } = await threads.create({ requestKey: "c" });
    refuse.on = true;
    let timerRan = false;
    setTimeout(() => (timerRan = true), 0);
    await assert.rejects(
      threads.send({ threadId, requestKey: "k", input: { text: "hi" } }),
      isCode("storage_failure"),
    );
    assert.equal(refuse.count, 9, "the first attempt and 8 re-plans");
    assert.ok(timerRan, "the re-plans waited on timers, so other work ran in between");
    // The refused command consumed nothing: the same key works once the store lets it through.
    refuse.on = false;
    const sent = await threads.send({ threadId, requestKey: "k", input: { text: "hi" } });
    assert.equal(sent.queued, false);
    const view = await threads.waitForIdle(threadId, { timeoutMs: 5000 });
    assert.equal(view.items.at(-1)?.text, "after the race");
    await host.shutdown();
  });

  test("a completed turn hands over to queued input: each turn starts and ends once, in order", async () => {
    const release = deferred();
    const wait = defineTool({
      name: "wait",
      description: "Waits for the test",
      input: z.object({}),
      execute: async () => {
        await release.promise;
        return "done";
      },
    });
    const gateway = scriptedGateway([
      { toolCalls: [{ name: "wait", arguments: {} }] },
      { text: "first answer" },
      { text: "second answer" },
    ]);
    const events: ObservationEvent[] = [];
    const host = await openHost({ store: memoryStore(), onEvent: (event) => events.push(event) });
    const threads = host.threads({
      agent: defineAgent({ id: "a", systemPrompt: "s", gateway, tools: [wait] }),
    });
    const { threadId } = await threads.create({ requestKey: "c" });
    const first = await threads.send({ threadId, requestKey: "one", input: { text: "one" } });
    const second = await threads.send({ threadId, requestKey: "two", input: { text: "two" } });
    assert.equal(second.queued, true);
    release.resolve();
    // The hand-over commits the first turn's end and the second's start together,
    // so the thread is never idle in between.
    const settled = await threads.waitForIdle(threadId, { timeoutMs: 5000 });
    assert.deepEqual(settled.queue, []);
    assert.equal(settled.turns.length, 2);
    assert.deepEqual(settled.turns.map((turn) => turn.outcome), ["completed", "completed"]);
    assert.deepEqual(
      settled.items.filter((item) => item.kind === "user" || item.kind === "assistant")
        .map((item) => item.text),
      ["one", "first answer", "two", "second answer"],
    );
    const turnEvents = events.filter((event) => event.type.startsWith("turn."))
      .map((event) => `${event.type} ${event.turnId === first.turnId ? 1 : 2}`);
    assert.deepEqual(turnEvents, [
      "turn.started 1",
      "turn.ended 1",
      "turn.started 2",
      "turn.ended 2",
    ]);
    await host.shutdown();
  });

  test("queued input whose agent cannot be had stays queued; the finished turn still ends", async () => {
    const release = deferred();
    const wait = defineTool({
      name: "wait",
      description: "Waits for the test",
      input: z.object({}),
      execute: async () => {
        await release.promise;
        return "done";
      },
    });
    const gateway = scriptedGateway([
      { toolCalls: [{ name: "wait", arguments: {} }] },
      { text: "first answer" },
      { text: "promoted answer" },
    ]);
    const agent: Agent = defineAgent({
      id: "a",
      systemPrompt: "s",
      gateway,
      tools: [wait],
      providerRetry: FAST_RETRY,
    });
    let factoryCalls = 0;
    const events: ObservationEvent[] = [];
    const host = await openHost({ store: memoryStore(), onEvent: (event) => events.push(event) });
    const threads = host.threads({
      agentFactory: () => {
        // The second call is the hand-over's: it fails once.
        if (++factoryCalls === 2) throw new Error("no agent right now");
        return agent;
      },
    });
    const { threadId } = await threads.create({ requestKey: "c" });
    await threads.send({ threadId, requestKey: "one", input: { text: "one" } });
    const queued = await threads.send({ threadId, requestKey: "two", input: { text: "two" } });
    assert.equal(queued.queued, true);
    release.resolve();
    const view = await threads.waitForIdle(threadId, { timeoutMs: 5000 });
    assert.equal(view.status, "idle");
    assert.deepEqual(view.turns.map((turn) => turn.outcome), ["completed"]);
    assert.equal(view.queue.length, 1, "the input waits in the queue");
    assert.equal(events.filter((event) => event.type === "queue.handover_failed").length, 1);
    const promoted = await threads.promoteQueued({
      threadId,
      requestKey: "promote",
      queueId: view.queue[0].id,
    });
    const after = await threads.waitForIdle(threadId, { timeoutMs: 5000 });
    assert.deepEqual(after.queue, []);
    assert.equal(after.turns.at(-1)?.turnId, promoted.turnId);
    assert.equal(after.items.at(-1)?.text, "promoted answer");
    await host.shutdown();
  });

  test("a fork re-plans on the source's new version when another host changed it", async () => {
    const store = memoryStore();
    const gateway = scriptedGateway([{ text: "answer" }]);
    const agent = defineAgent({ id: "a", systemPrompt: "s", gateway });
    const hostA = await openHost({ store, hostId: "a" });
    const hostB = await openHost({ store, hostId: "b" });
    const threadsA = hostA.threads({ agent });
    const threadsB = hostB.threads({ agent });
    const { threadId } = await threadsA.create({ requestKey: "c" });
    await threadsA.send({ threadId, requestKey: "s", input: { text: "hi" } });
    await threadsA.waitForIdle(threadId, { timeoutMs: 5000 });
    // Host B writes the source; host A's copy in memory is now one version behind.
    await threadsB.setTitle({ threadId, requestKey: "t", title: "renamed elsewhere" });
    const forked = await threadsA.fork({ threadId, requestKey: "f" });
    assert.notEqual(forked.threadId, threadId);
    assert.equal(forked.view.title, "renamed elsewhere");
    assert.deepEqual(forked.view.items.map((item) => item.text), ["hi", "answer"]);
    await hostB.shutdown();
    await hostA.shutdown();
  });
});
