// Audit (round 11): a lone observer — the thread's first listener, so every
// publication before it was built for nobody — joins mid-stream or mid-tool,
// then the host cancels (immediately or gracefully), retries, steers, promotes
// and deletes queued input, sets the title, and deletes the thread. After each
// command the observer's copy must equal the view, with no gap or duplicate;
// a delete ends the subscription. In-process and over HTTP.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import {
  defineAgent,
  defineTool,
  type Gateway,
  memoryStore,
  openHost,
  type ProviderEvent,
  type ProviderRequest,
  type ThreadService,
  type ThreadView,
} from "@floret/engine";
import { threadApi, threadClient } from "@floret/engine/http";
import { Observer, stateOf } from "./support/audit_observer.ts";

const services: { name: string; wrap: (threads: ThreadService) => ThreadService }[] = [
  { name: "in-process", wrap: (threads) => threads },
  {
    name: "over HTTP",
    wrap: (threads) => {
      const app = threadApi(threads, { authorize: () => true, turnControl: true });
      return threadClient({ baseUrl: "http://127.0.0.1", fetch: (request) => app.fetch(request) });
    },
  },
];

type Move =
  | { text: string; hold?: boolean }
  | { call: string; args?: unknown }
  | { fail: string };

/**
 * A gateway played by the test: each attempt takes the next move; a `hold`
 * move streams its text, says so, and then waits for the abort.
 */
function playedGateway(moves: Move[]): Gateway & { streaming: () => Promise<void> } {
  let next = 0;
  let streamed!: () => void;
  let streaming = new Promise<void>((resolve) => (streamed = resolve));
  return {
    info: { provider: "test", model: "played", stateKey: "test:played", capabilities: {} },
    streaming: () => streaming,
    async *stream(_request: ProviderRequest, { signal }): AsyncIterable<ProviderEvent> {
      const move = moves[next++];
      if (!move) throw new Error("no more moves");
      if ("fail" in move) {
        const { ProviderError } = await import("@floret/engine");
        throw new ProviderError(move.fail, { retry: "never" });
      }
      if ("call" in move) {
        const callId = `call-${next}`;
        yield { type: "tool-call-start", callId, name: move.call };
        yield { type: "tool-call-delta", callId, argumentsDelta: JSON.stringify(move.args ?? {}) };
        yield { type: "tool-call-end", callId };
        yield { type: "finish", reason: "tool_calls" };
        return;
      }
      for (const piece of move.text.match(/.{1,4}/gu) ?? []) yield { type: "text", delta: piece };
      if (move.hold) {
        // Let the engine show the text (its live updates wait up to 25 ms).
        await new Promise((resolve) => setTimeout(resolve, 40));
        const done = streamed;
        streaming = new Promise<void>((resolve) => (streamed = resolve));
        done();
        await new Promise<void>((resolve) => {
          if (signal.aborted) resolve();
          signal.addEventListener("abort", () => resolve(), { once: true });
        });
        throw signal.reason ?? new Error("aborted");
      }
      yield { type: "usage", usage: { inputTokens: 5, outputTokens: 2 } };
      yield { type: "finish", reason: "stop" };
    },
  };
}

async function setUp(moves: Move[], wrap: (threads: ThreadService) => ThreadService) {
  let release!: () => void;
  let entered!: () => void;
  const toolEntered = new Promise<void>((resolve) => (entered = resolve));
  const toolReleased = new Promise<void>((resolve) => (release = resolve));
  const slow = defineTool({
    name: "slow",
    description: "Waits for the test",
    input: z.object({}),
    execute: async () => {
      entered();
      await toolReleased;
      return "slow done";
    },
  });
  const gateway = playedGateway(moves);
  const host = await openHost({ store: memoryStore() });
  const threads = wrap(host.threads({
    agent: defineAgent({
      id: "cmd",
      systemPrompt: "Commands.",
      gateway,
      tools: [slow],
      providerRetry: { disabled: true },
    }),
  }));
  const { threadId } = await threads.create({ requestKey: "create" });
  return { host, threads, threadId, gateway, toolEntered, release };
}

async function caughtUp(observer: Observer, threads: ThreadService, threadId: string) {
  const view: ThreadView = await threads.view(threadId);
  await observer.reach(view);
  assert.deepEqual(observer.problems, []);
  assert.equal(observer.resyncs, 0);
  assert.deepEqual(stateOf(observer.local), stateOf(view));
  return view;
}

for (const service of services) {
  describe(`a lone late observer through commands, ${service.name}`, () => {
    test("joined mid-stream, then an immediate cancel, a retry and a setTitle", async () => {
      const e = await setUp([
        { text: "partial answer that streams", hold: true },
        { text: "the retried answer" },
      ], service.wrap);
      await e.threads.send({ threadId: e.threadId, requestKey: "s", input: { text: "hello" } });
      await e.gateway.streaming();
      const observer = await Observer.join(e.threads, e.threadId);
      assert.equal(observer.local.items.at(-1)?.live, true, "joined while text streams");
      const cancelled = await e.threads.cancel({ threadId: e.threadId, requestKey: "stop" });
      assert.notEqual(cancelled.view.status, "running");
      let view = await caughtUp(observer, e.threads, e.threadId);
      assert.equal(view.turns.at(-1)?.outcome, "cancelled");
      await e.threads.retry({ threadId: e.threadId, requestKey: "again" });
      await e.threads.waitForIdle(e.threadId, { timeoutMs: 10_000 });
      view = await caughtUp(observer, e.threads, e.threadId);
      assert.equal(view.items.at(-1)?.text, "the retried answer");
      await e.threads.setTitle({ threadId: e.threadId, requestKey: "title", title: "Named" });
      view = await caughtUp(observer, e.threads, e.threadId);
      assert.equal(view.title, "Named");
      await observer.leave();
      await e.host.shutdown();
    });

    test("joined mid-stream, then a graceful cancel keeps the streamed text", async () => {
      const e = await setUp([{ text: "kept text", hold: true }], service.wrap);
      await e.threads.send({ threadId: e.threadId, requestKey: "s", input: { text: "hello" } });
      await e.gateway.streaming();
      const observer = await Observer.join(e.threads, e.threadId);
      await e.threads.cancel({ threadId: e.threadId, requestKey: "stop", mode: "graceful" });
      await e.threads.waitForIdle(e.threadId, { timeoutMs: 10_000 });
      const view = await caughtUp(observer, e.threads, e.threadId);
      assert.equal(view.items.at(-1)?.text, "kept text");
      assert.equal(view.items.at(-1)?.live, undefined);
      await observer.leave();
      await e.host.shutdown();
    });

    test("joined while a tool runs with input queued; a failed turn; promote and delete queued", async () => {
      const e = await setUp([
        { call: "slow" },
        { fail: "no" },
        { text: "promoted answer" },
      ], service.wrap);
      await e.threads.send({ threadId: e.threadId, requestKey: "s", input: { text: "hello" } });
      await e.toolEntered;
      const one = await e.threads.send({
        threadId: e.threadId,
        requestKey: "q1",
        input: { text: "q1" },
      });
      const two = await e.threads.send({
        threadId: e.threadId,
        requestKey: "q2",
        input: { text: "q2" },
      });
      assert.equal(one.queued && two.queued, true);
      const observer = await Observer.join(e.threads, e.threadId);
      assert.equal(observer.local.queue.length, 2);
      e.release();
      const failed = await e.threads.waitForIdle(e.threadId, { timeoutMs: 10_000 });
      assert.equal(failed.turns.at(-1)?.outcome, "failed");
      await caughtUp(observer, e.threads, e.threadId);
      const [first, second] = failed.queue;
      await e.threads.deleteQueued({ threadId: e.threadId, requestKey: "dq", queueId: second!.id });
      await caughtUp(observer, e.threads, e.threadId);
      await e.threads.promoteQueued({ threadId: e.threadId, requestKey: "pq", queueId: first!.id });
      await e.threads.waitForIdle(e.threadId, { timeoutMs: 10_000 });
      const view = await caughtUp(observer, e.threads, e.threadId);
      assert.deepEqual(view.queue, []);
      assert.equal(view.items.at(-1)?.text, "promoted answer");
      await observer.leave();
      await e.host.shutdown();
    });

    test("a delete ends the subscription; subscribing again is thread_not_found", async () => {
      const e = await setUp([{ text: "answer" }], service.wrap);
      await e.threads.send({ threadId: e.threadId, requestKey: "s", input: { text: "hello" } });
      await e.threads.waitForIdle(e.threadId, { timeoutMs: 10_000 });
      const updates = e.threads.subscribe(e.threadId)[Symbol.asyncIterator]();
      await e.threads.view(e.threadId);
      await e.threads.delete({ threadId: e.threadId, requestKey: "del" });
      let next = await updates.next();
      while (!next.done && next.value.type === "batch") next = await updates.next();
      assert.equal(next.done, true, "the subscription ends (no resync loop)");
      const again = e.threads.subscribe(e.threadId)[Symbol.asyncIterator]();
      await assert.rejects(
        again.next(),
        (error: unknown) => (error as { code?: string }).code === "thread_not_found",
      );
      await e.host.shutdown();
    });
  });
}
