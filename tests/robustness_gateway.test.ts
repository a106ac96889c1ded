/**
 * Issue 8, cause 4: a gateway (or a tool) that ignores its abort signal
 * cannot hold a turn. Timeouts fire, cancel and shutdown return within their
 * bounds, and the abandoned stream's later events are ignored.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import {
  defineAgent,
  defineTool,
  type Gateway,
  memoryStore,
  openHost,
  type ToolDefinition,
} from "@floret/engine";
import { lastTurn } from "./support/engine.ts";
import {
  answerEvents,
  callEvents,
  misbehavingGateway,
  TIMEOUT,
  watchdog,
} from "./support/robust.ts";

const WATCHDOG_MS = 15_000;

async function start(gateway: Gateway, tools: ToolDefinition[] = [], firstOutputMs = 60_000) {
  const host = await openHost({ store: memoryStore() });
  const threads = host.threads({
    agent: defineAgent({
      id: "a",
      systemPrompt: "s",
      gateway,
      tools,
      providerRetry: { disabled: true },
      timeouts: { firstOutputMs },
    }),
  });
  const { threadId } = await threads.create({ requestKey: "c" });
  await threads.send({ threadId, requestKey: "s", input: { text: "go" } });
  return { host, threads, threadId };
}

describe("robustness: gateways and tools that ignore their abort signal", () => {
  test("the first-output timeout fires even when the iterator never answers", TIMEOUT, async () => {
    await watchdog(WATCHDOG_MS, async () => {
      const gateway = misbehavingGateway([{ kind: "deaf" }]);
      const { host, threads, threadId } = await start(gateway, [], 50);
      const view = await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
      assert.deepEqual(lastTurn(view), { outcome: "failed", code: "provider_error" });
      assert.match(view.turns.at(-1)!.failure!.message, /timed out/);
      await host.shutdown();
    });
  });

  test("cancel returns and settles the turn while the gateway never answers", TIMEOUT, async () => {
    await watchdog(WATCHDOG_MS, async () => {
      const { host, threads, threadId } = await start(misbehavingGateway([{ kind: "deaf" }]));
      const { view } = await threads.cancel({ threadId, requestKey: "x" });
      assert.equal(view.status, "idle");
      assert.equal(lastTurn(view).outcome, "cancelled");
      await host.shutdown();
    });
  });

  test("shutdown() without a signal returns while the gateway never answers", TIMEOUT, async () => {
    await watchdog(WATCHDOG_MS, async () => {
      const { host } = await start(misbehavingGateway([{ kind: "deaf" }]));
      await host.shutdown();
    });
  });

  test("an abandoned stream's later events are ignored", TIMEOUT, async () => {
    await watchdog(WATCHDOG_MS, async () => {
      const gateway = misbehavingGateway([{
        kind: "late",
        delayMs: 40,
        events: [...answerEvents("late text"), ...answerEvents("more")],
      }]);
      const { host, threads, threadId } = await start(gateway, [], 10);
      const view = await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
      assert.equal(lastTurn(view).code, "provider_error");
      // The late events arrive after the timeout and change nothing.
      await new Promise((resolve) => setTimeout(resolve, 150));
      const after = await threads.view(threadId);
      assert.deepEqual(after.items, view.items);
      assert.equal(after.items.some((item) => item.text?.includes("late")), false);
      await host.shutdown();
    });
  });

  test("a tool that ignores its signal: cancel and shutdown() still return", TIMEOUT, async () => {
    await watchdog(WATCHDOG_MS, async () => {
      const started = manual();
      const hang = defineTool({
        name: "hang",
        description: "Never returns",
        input: z.object({}),
        execute: () => {
          started.resolve();
          return new Promise<string>(() => {});
        },
      });
      const gateway = misbehavingGateway([
        {
          kind: "events",
          events: [...callEvents("c1", "hang", "{}"), { type: "finish", reason: "tool_calls" }],
        },
        { kind: "events", events: answerEvents("after") },
      ]);
      const { host, threads, threadId } = await start(gateway, [hang]);
      await started.promise;
      const { view } = await threads.cancel({ threadId, requestKey: "x" });
      assert.notEqual(view.status, "running");
      assert.equal(lastTurn(view).outcome, "cancelled");
      // A second turn with the same hanging tool, then shutdown without a signal.
      const again = manual();
      const gateway2 = misbehavingGateway([
        {
          kind: "events",
          events: [...callEvents("c2", "hang2", "{}"), { type: "finish", reason: "tool_calls" }],
        },
      ]);
      const hang2 = defineTool({
        name: "hang2",
        description: "Never returns",
        input: z.object({}),
        execute: () => {
          again.resolve();
          return new Promise<string>(() => {});
        },
      });
      const second = await start(gateway2, [hang2]);
      await again.promise;
      await second.host.shutdown();
      await host.shutdown();
    });
  });
});

function manual(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}
