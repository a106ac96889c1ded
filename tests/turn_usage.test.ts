/**
 * Issue 29, supplemental context, usage and startup: a turn with
 * supplemental context stores no provider continuation state and its usage
 * is never `confirmed`; the `usage` observation comes after its commit and
 * carries the thread's totals; a fresh or current store reports only the
 * `verifying` startup phase.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  defineAgent,
  type Gateway,
  memoryStore,
  type ObservationEvent,
  openHost,
  type ProviderEvent,
  type ProviderRequest,
} from "@floret/engine";
import { setup } from "./support/context_host.ts";
import { words } from "./support/context_gateway.ts";

/** Answers every request with text, usage and opaque state; keeps the requests. */
function stateGateway(): Gateway & { requests: ProviderRequest[] } {
  const requests: ProviderRequest[] = [];
  return {
    requests,
    info: {
      provider: "t",
      model: "m",
      stateKey: "t:m",
      capabilities: { contextWindowTokens: 100_000 },
    },
    async *stream(request): AsyncGenerator<ProviderEvent> {
      requests.push(structuredClone(request));
      yield { type: "text", delta: `answer ${requests.length}` };
      yield { type: "usage", usage: { inputTokens: 100, outputTokens: 10 } };
      yield { type: "finish", reason: "stop", state: { signature: `sig-${requests.length}` } };
    },
  };
}

test("a turn with supplemental context leaves no state and no confirmed usage", async () => {
  const gateway = stateGateway();
  const host = await openHost({ store: memoryStore() });
  const threads = host.threads({ agent: defineAgent({ id: "a", systemPrompt: "s", gateway }) });
  const { threadId } = await threads.create({ requestKey: "c" });
  await threads.send({
    threadId,
    requestKey: "s1",
    input: { text: "one" },
    supplementalContext: [{ title: "Editor", text: "the open file" }],
  });
  await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
  assert.equal((await threads.context(threadId)).confirmed, undefined);
  await threads.send({ threadId, requestKey: "s2", input: { text: "two" } });
  await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
  const second = gateway.requests[1];
  const first = second.messages.find((m) => m.role === "assistant") as { state?: unknown };
  assert.equal(first.state, undefined, "no continuation state from the supplemental turn");
  // The plain turn's usage is confirmed as before.
  assert.ok((await threads.context(threadId)).confirmed);
  // Usage is still accounted on the turn.
  const view = await threads.view(threadId);
  assert.deepEqual(view.turns[0].usage, { inputTokens: 100, outputTokens: 10 });
  await host.shutdown();
});

test("the usage observation comes after its commit and carries the thread's totals", async () => {
  const events: ObservationEvent[] = [];
  const store = memoryStore();
  const gateway = stateGateway();
  const host = await openHost({ store, onEvent: (event) => events.push(event) });
  const threads = host.threads({ agent: defineAgent({ id: "a", systemPrompt: "s", gateway }) });
  const { threadId } = await threads.create({ requestKey: "c" });
  for (const key of ["s1", "s2"]) {
    await threads.send({ threadId, requestKey: key, input: { text: key } });
    await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
  }
  const usage = events.filter((event) => event.type === "usage");
  assert.equal(usage.length, 2);
  const detail = usage[1] as unknown as { threadUsage: unknown };
  assert.deepEqual(detail.threadUsage, { inputTokens: 200, outputTokens: 20 });
  // After the commit: a one-step turn's end (committed with its step) is told first.
  const order = events.map((event) => event.type);
  assert.ok(order.indexOf("turn.ended") < order.indexOf("usage"), order.join(", "));
  await host.shutdown();
});

test("a fresh or current store reports only the verifying phase", async () => {
  const inner = memoryStore();
  // The same store opened twice: fresh, then current (shutdown must not close it).
  const store = {
    ...inner,
    getMany: inner.getMany.bind(inner),
    list: inner.list.bind(inner),
    commit: inner.commit.bind(inner),
    close: async () => {},
  } as typeof inner;
  for (let i = 0; i < 2; i++) {
    const phases: string[] = [];
    const host = await openHost({ store, onStartup: (phase) => phases.push(phase) });
    assert.deepEqual(phases, ["verifying"]);
    await host.shutdown();
  }
});

test("a successful compaction clears the confirmed usage", async () => {
  const e = await setup();
  e.gateway.answers.push(
    { text: words(3000, "long"), usage: { inputTokens: 50, outputTokens: 4500 } },
    { text: words(1950, "more"), usage: { inputTokens: 4600, outputTokens: 2900 } },
  );
  await e.say("HEAD first question");
  await e.say("write a lot");
  assert.ok((await e.threads.context(e.threadId)).confirmed, "confirmed before");
  await e.threads.compact({ threadId: e.threadId, requestKey: "compact" });
  await e.threads.waitForIdle(e.threadId, { timeoutMs: 20_000 });
  const figures = await e.threads.context(e.threadId);
  assert.equal(figures.compactions.at(-1)?.status, "compacted");
  assert.equal(figures.confirmed, undefined);
  await e.host.shutdown();
});
