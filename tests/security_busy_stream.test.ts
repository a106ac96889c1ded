// A gateway stream that never awaits I/O cannot starve timers (DESIGN §11):
// the engine gives the event loop a turn at least every 50 ms of stream
// processing, so a timer-driven cancel and the attempt clock still fire.
import { test } from "node:test";
import assert from "node:assert/strict";
import { defineAgent, type Gateway, memoryStore, openHost } from "@floret/engine";

/** Yields text forever, without ever awaiting anything but its own next(). */
function busyGateway(): Gateway {
  return {
    info: { provider: "busy", model: "busy", stateKey: "busy", capabilities: {} },
    async *stream() {
      for (;;) yield { type: "text", delta: "x" };
    },
  };
}

test("a timer-driven cancel stops a stream that never awaits I/O", async () => {
  const host = await openHost({ store: memoryStore() });
  const threads = host.threads({
    agent: defineAgent({ id: "busy", systemPrompt: "x", gateway: busyGateway() }),
  });
  const { threadId } = await threads.create({ requestKey: "c" });
  await threads.send({ threadId, requestKey: "s", input: { text: "go" } });
  const timerFired = await new Promise<boolean>((resolve) => {
    setTimeout(() => {
      threads.cancel({ threadId, requestKey: "stop", mode: "immediate" }).then(
        () => resolve(true),
        () => resolve(false),
      );
    }, 100);
  });
  assert.equal(timerFired, true);
  const view = await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
  assert.equal(view.turns.at(-1)?.outcome, "cancelled");
  await host.shutdown();
});

test("the attempt clock still fires on a stream that never awaits I/O", async () => {
  const host = await openHost({ store: memoryStore() });
  const threads = host.threads({
    agent: defineAgent({
      id: "busy",
      systemPrompt: "x",
      gateway: busyGateway(),
      timeouts: { attemptMs: 150 },
      providerRetry: { disabled: true },
    }),
  });
  const { threadId } = await threads.create({ requestKey: "c" });
  await threads.send({ threadId, requestKey: "s", input: { text: "go" } });
  const view = await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
  assert.equal(view.turns.at(-1)?.outcome, "failed");
  await host.shutdown();
});
