// Audit (round 11) of a run's tool calls through the public API: call ids
// that providers reuse across steps or turns must not mix tool items up (tool
// items are found by (run or turn, call id) since round 8), and whatever a
// handler rejects with becomes an error result the model sees.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import {
  defineAgent,
  defineTool,
  type Host,
  memoryStore,
  openHost,
  type ThreadView,
  type ToolContext,
} from "@floret/engine";
import { scriptedGateway, type ScriptStep } from "@floret/engine/testing";
import { TIMEOUT, watchdog } from "./support/robust.ts";
import { open, quickTool, sendGo, toolItems, WATCHDOG_MS } from "./support/audit_tools.ts";

describe("audit lifecycle: call ids reused by the provider", () => {
  test(
    "the same call id in two steps of one turn: two tool items, each with its own result",
    TIMEOUT,
    async () => {
      await watchdog(WATCHDOG_MS, async () => {
        const contexts: ToolContext[] = [];
        const { host, threads, threadId, gateway } = await open([
          { toolCalls: [{ name: "quick", arguments: { n: 1 }, callId: "call_0" }] },
          { toolCalls: [{ name: "quick", arguments: { n: 2 }, callId: "call_0" }] },
          { text: "both done" },
        ], [quickTool(contexts)]);
        try {
          await sendGo(threads, threadId);
          const view = await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
          assert.equal(view.status, "idle");
          const outcome = view.turns.at(-1)?.outcome;
          if (outcome === "completed") {
            assert.deepEqual(toolItems(view).map((item) => item.tool?.output), [
              "quick 1",
              "quick 2",
            ]);
            assert.equal(view.items.at(-1)?.text, "both done");
            const toolMessages = gateway.requests[2].messages.filter((m) => m.role === "tool");
            assert.deepEqual(toolMessages.map((m) => m.role === "tool" ? m.output : ""), [
              "quick 1",
              "quick 2",
            ]);
          } else {
            // Refusing the reuse is acceptable only as a contract failure that names it.
            assert.equal(view.turns.at(-1)?.failure?.code, "engine_contract");
          }
          const ids = view.items.map((item) => item.id);
          assert.equal(new Set(ids).size, ids.length, "view item ids are unique");
        } finally {
          await host.shutdown();
        }
      });
    },
  );

  test(
    "the same call id in two turns: each turn's tool item keeps its own result, live and after a restart",
    TIMEOUT,
    async () => {
      await watchdog(WATCHDOG_MS, async () => {
        const contexts: ToolContext[] = [];
        // One memory store for both hosts: the first host's shutdown must not close it.
        const inner = memoryStore();
        const store = { ...inner, close: () => Promise.resolve() };
        const steps: ScriptStep[] = [
          { toolCalls: [{ name: "quick", arguments: { n: 1 }, callId: "call_0" }] },
          { text: "one" },
          { toolCalls: [{ name: "quick", arguments: { n: 2 }, callId: "call_0" }] },
          { text: "two" },
        ];
        const agent = defineAgent({
          id: "audit-tools",
          systemPrompt: "Audit.",
          gateway: scriptedGateway(steps),
          tools: [quickTool(contexts)],
        });
        let host: Host = await openHost({ store });
        const threads = host.threads({ agent });
        const { threadId } = await threads.create({ requestKey: "create" });
        await sendGo(threads, threadId, "first");
        await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
        await sendGo(threads, threadId, "second");
        const live = await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
        assert.deepEqual(live.turns.map((turn) => turn.outcome), ["completed", "completed"]);
        const shape = (view: ThreadView) =>
          toolItems(view).map((item) => [item.turnId, item.tool?.callId, item.tool?.output]);
        assert.deepEqual(shape(live).map(([, callId, output]) => [callId, output]), [
          ["call_0", "quick 1"],
          ["call_0", "quick 2"],
        ]);
        assert.deepEqual(shape(live).map(([turnId]) => turnId), live.turns.map((t) => t.turnId));
        await host.shutdown();
        host = await openHost({ store });
        const reread = await host.threads({ agent }).view(threadId);
        assert.deepEqual(shape(reread), shape(live));
        await host.shutdown();
      });
    },
  );
});

describe("audit lifecycle: handlers that reject with non-Errors", () => {
  const rejections: [string, () => unknown][] = [
    ["undefined", () => undefined],
    ["null", () => null],
    ["a symbol", () => Symbol("odd")],
    ["an object whose toString throws", () => ({
      toString() {
        throw new Error("no text");
      },
    })],
    ["a revoked proxy", () => {
      const { proxy, revoke } = Proxy.revocable({}, {});
      revoke();
      return proxy;
    }],
  ];
  for (const [name, make] of rejections) {
    test(
      `an async handler rejecting with ${name}: an error result the model sees, then the turn goes on`,
      TIMEOUT,
      async () => {
        await watchdog(WATCHDOG_MS, async () => {
          const probe = defineTool({
            name: "probe",
            description: "Rejects later",
            input: z.object({}),
            execute: async () => {
              await new Promise((resolve) => setTimeout(resolve, 1));
              throw make();
            },
          });
          const { host, threads, threadId, gateway } = await open([
            { toolCalls: [{ name: "probe", arguments: {}, callId: "p1" }] },
            { text: "went on" },
          ], [probe]);
          try {
            await sendGo(threads, threadId);
            const view = await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
            assert.equal(view.turns.at(-1)?.outcome, "completed");
            assert.deepEqual(toolItems(view).map((item) => item.tool?.status), ["error"]);
            assert.equal(view.items.at(-1)?.text, "went on");
            const result = gateway.requests[1].messages.find((m) => m.role === "tool");
            assert.equal(result?.role === "tool" && result.isError, true);
            assert.equal(typeof (result?.role === "tool" && result.output), "string");
          } finally {
            await host.shutdown();
          }
        });
      },
    );
  }
});
