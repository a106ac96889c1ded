// Audit (round 11) of a run's tools through the public API: the tool's
// AbortSignal (context.signal) is made lazily since round 6, so it must still
// come out aborted after an immediate cancel, a delete or a shutdown even when
// the handler never read it before, must stay unaborted for runs nobody
// stopped (and for an earlier run when a later one is stopped), and a
// graceful cancel leaves it alone while the tools' window lasts. Call ids that
// providers reuse across steps or turns must not mix tool items up (tool
// items are found by (run or turn, call id) since round 8).
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import {
  defineAgent,
  defineTool,
  type Host,
  memoryStore,
  openHost,
  type ThreadService,
  type ThreadServiceWave2,
  type ThreadView,
  type ToolContext,
} from "@floret/engine";
import { scriptedGateway, type ScriptStep } from "@floret/engine/testing";
import { TIMEOUT, watchdog } from "./support/robust.ts";

const WATCHDOG_MS = 20_000;

/** A handler held open by the test; it never reads its context unless told to. */
interface Held {
  contexts: ToolContext[];
  started: Promise<void>;
  release: (output: string) => void;
}

function heldCalls(expected = 1): Held {
  const contexts: ToolContext[] = [];
  let startedResolve!: () => void;
  const started = new Promise<void>((r) => (startedResolve = r));
  const waiting: ((output: string) => void)[] = [];
  const held: Held = {
    contexts,
    started,
    release: (output) => {
      for (const resolve of waiting.splice(0)) resolve(output);
    },
  };
  heldTools.set(held, () =>
    new Promise<string>((resolve) => {
      waiting.push(resolve);
      if (contexts.length >= expected) startedResolve();
    }));
  return held;
}
const heldTools = new Map<Held, () => Promise<string>>();

/** A tool whose handler keeps its context without touching `signal`. */
function holdTool(
  held: Held,
  effect: "none" | "write" = "none",
  permission: "allow" | "ask" = "allow",
) {
  return defineTool({
    name: "hold",
    description: "Waits for the test",
    input: z.object({ n: z.number() }),
    effect,
    permission,
    execute: (_input, context) => {
      held.contexts.push(context);
      return heldTools.get(held)!();
    },
  });
}

/** A tool that answers at once and keeps its context (never reading its signal). */
function quickTool(contexts: ToolContext[]) {
  return defineTool({
    name: "quick",
    description: "Answers at once",
    input: z.object({ n: z.number() }),
    execute: ({ n }, context) => {
      contexts.push(context);
      return `quick ${n}`;
    },
  });
}

async function open(steps: ScriptStep[], tools: ReturnType<typeof defineTool>[]) {
  const gateway = scriptedGateway(steps);
  const host = await openHost({ store: memoryStore() });
  const threads = host.threads({
    agent: defineAgent({
      id: "audit-tools",
      systemPrompt: "Audit.",
      gateway,
      tools,
      providerRetry: { delaysMs: [1, 1, 1, 1] },
    }),
  });
  const { threadId } = await threads.create({ requestKey: "create" });
  return { host, threads, threadId, gateway };
}

const toolItems = (view: ThreadView) => view.items.filter((item) => item.kind === "tool");
const holdCall = (callId = "h1"): ScriptStep => ({
  toolCalls: [{ name: "hold", arguments: { n: 1 }, callId }],
});

async function sendGo(threads: ThreadService, threadId: string, key = "go"): Promise<void> {
  await threads.send({ threadId, requestKey: key, input: { text: key } });
}

describe("audit lifecycle: the tool's AbortSignal", () => {
  test(
    "immediate cancel aborts a signal the handler never read; its late result changes nothing",
    TIMEOUT,
    async () => {
      await watchdog(WATCHDOG_MS, async () => {
        const held = heldCalls();
        const { host, threads, threadId } = await open([holdCall(), { text: "never" }], [
          holdTool(held),
        ]);
        try {
          await sendGo(threads, threadId);
          await held.started;
          const { view } = await threads.cancel({ threadId, requestKey: "stop" });
          assert.equal(view.turns.at(-1)?.outcome, "cancelled");
          const signal = held.contexts[0].signal;
          assert.equal(
            signal.aborted,
            true,
            "the tool signal is aborted after an immediate cancel",
          );
          assert.equal(held.contexts[0].signal, signal, "the same signal on every read");
          held.release("late output");
          await new Promise((resolve) => setTimeout(resolve, 50));
          const after = await threads.view(threadId);
          assert.equal(after.status, "idle");
          assert.notEqual(toolItems(after)[0]?.tool?.status, "completed");
          assert.equal(after.items.some((item) => item.tool?.output === "late output"), false);
          assert.deepEqual(after.turns.map((turn) => turn.outcome), ["cancelled"]);
        } finally {
          held.release("x");
          await host.shutdown();
        }
      });
    },
  );

  test(
    "both calls of a batch see the abort, read before or after the cancel",
    TIMEOUT,
    async () => {
      await watchdog(WATCHDOG_MS, async () => {
        const held = heldCalls(2);
        let heard = 0;
        const listening = defineTool({
          name: "listen",
          description: "Listens to its signal from the start",
          input: z.object({}),
          execute: (_input, context) => {
            held.contexts.push(context);
            context.signal.addEventListener("abort", () => heard++);
            return heldTools.get(held)!();
          },
        });
        const { host, threads, threadId } = await open([
          {
            toolCalls: [
              { name: "hold", arguments: { n: 1 }, callId: "a" },
              { name: "listen", arguments: {}, callId: "b" },
            ],
          },
        ], [holdTool(held), listening]);
        try {
          await sendGo(threads, threadId);
          await held.started;
          assert.equal(held.contexts.length, 2);
          assert.equal(held.contexts[1].signal.aborted, false, "not aborted before the cancel");
          await threads.cancel({ threadId, requestKey: "stop" });
          assert.deepEqual(held.contexts.map((context) => context.signal.aborted), [true, true]);
          assert.equal(heard, 1, "a listener hears the abort once");
          assert.deepEqual(held.contexts.map((context) => context.callId), ["a", "b"]);
        } finally {
          held.release("x");
          await host.shutdown();
        }
      });
    },
  );

  for (const withSignal of [false, true]) {
    test(
      `shutdown ${withSignal ? "with" : "without"} a signal aborts a signal the handler never read`,
      TIMEOUT,
      async () => {
        await watchdog(WATCHDOG_MS, async () => {
          const held = heldCalls();
          const { host, threads, threadId } = await open([holdCall()], [holdTool(held)]);
          await sendGo(threads, threadId);
          await held.started;
          const controller = new AbortController();
          const stopping = host.shutdown(withSignal ? { signal: controller.signal } : undefined);
          // The handler ignores its signal: the caller's signal bounds the wait.
          if (withSignal) setTimeout(() => controller.abort(), 100);
          await stopping;
          assert.equal(held.contexts[0].signal.aborted, true);
          held.release("late");
        });
      },
    );
  }

  test("delete aborts a signal the handler never read", TIMEOUT, async () => {
    await watchdog(WATCHDOG_MS, async () => {
      const held = heldCalls();
      const { host, threads, threadId } = await open([holdCall()], [holdTool(held)]);
      try {
        await sendGo(threads, threadId);
        await held.started;
        const deleting = threads.delete({ threadId, requestKey: "del" });
        // Delete waits for the run; the handler ignores its signal and answers once told.
        const settled = await Promise.race([
          deleting.then(() => "deleted"),
          new Promise((resolve) => setTimeout(() => resolve("waiting"), 200)),
        ]);
        const aborted = held.contexts[0].signal.aborted;
        held.release("late");
        await deleting;
        assert.equal(aborted, true, `the tool signal was not aborted by delete (${settled})`);
        await assert.rejects(threads.view(threadId), { code: "thread_not_found" });
      } finally {
        held.release("x");
        await host.shutdown();
      }
    });
  });

  test(
    "a run nobody stopped never aborts its tools' signal, nor does a later run's cancel or shutdown",
    TIMEOUT,
    async () => {
      await watchdog(WATCHDOG_MS, async () => {
        const contexts: ToolContext[] = [];
        const { host, threads, threadId } = await open([
          { toolCalls: [{ name: "quick", arguments: { n: 1 }, callId: "q1" }] },
          { text: "first done" },
          { toolCalls: [{ name: "quick", arguments: { n: 2 }, callId: "q2" }] },
          { hang: true },
        ], [quickTool(contexts)]);
        await sendGo(threads, threadId, "one");
        const first = await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
        assert.equal(first.turns.at(-1)?.outcome, "completed");
        assert.equal(contexts[0].signal.aborted, false, "a completed run's tool signal");
        await sendGo(threads, threadId, "two");
        // The second run's tool answered; its model request now hangs.
        for (let i = 0; i < 400 && contexts.length < 2; i++) {
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
        assert.equal(contexts.length, 2);
        await threads.cancel({ threadId, requestKey: "stop" });
        assert.equal(
          contexts[0].signal.aborted,
          false,
          "the first run is not stopped by the second's cancel",
        );
        assert.equal(contexts[1].signal.aborted, true, "the cancelled run's tool signal");
        assert.notEqual(contexts[0].signal, contexts[1].signal);
        await host.shutdown();
        assert.equal(contexts[0].signal.aborted, false, "shutdown stops no run that has ended");
      });
    },
  );

  test(
    "graceful cancel leaves the tools' signal alone while they finish in the window",
    TIMEOUT,
    async () => {
      await watchdog(WATCHDOG_MS, async () => {
        const held = heldCalls();
        const { host, threads, threadId } = await open([holdCall(), { text: "never" }], [
          holdTool(held),
        ]);
        try {
          await sendGo(threads, threadId);
          await held.started;
          const cancelling = threads.cancel({ threadId, requestKey: "soft", mode: "graceful" });
          await new Promise((resolve) => setTimeout(resolve, 30));
          assert.equal(held.contexts[0].signal.aborted, false, "graceful: the tool may finish");
          held.release("finished in time");
          const { view } = await cancelling;
          assert.equal(view.turns.at(-1)?.outcome, "cancelled");
          const tool = toolItems(view)[0]?.tool;
          assert.equal(tool?.status, "completed");
          assert.equal(tool?.output, "finished in time");
          assert.equal(view.status, "idle");
        } finally {
          held.release("x");
          await host.shutdown();
        }
      });
    },
  );

  test(
    "an approved call of a resumed run: immediate cancel aborts its signal, unread",
    TIMEOUT,
    async () => {
      await watchdog(WATCHDOG_MS, async () => {
        const held = heldCalls();
        const { host, threads, threadId } = await open([holdCall()], [
          holdTool(held, "write", "ask"),
        ]);
        try {
          await sendGo(threads, threadId);
          const waiting = await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
          assert.equal(waiting.status, "waiting");
          await threads.respond({
            threadId,
            requestKey: "yes",
            interactionId: waiting.pending[0].id,
            decision: "approve",
          });
          await held.started;
          const { view } = await threads.cancel({ threadId, requestKey: "stop" });
          assert.equal(held.contexts[0].signal.aborted, true);
          // A dispatched write whose result never came: unknown, and the turn failed so.
          assert.equal(toolItems(view)[0]?.tool?.status, "unknown");
          assert.equal(view.turns.at(-1)?.failure?.code, "effect_outcome_unknown");
        } finally {
          held.release("x");
          await host.shutdown();
        }
      });
    },
  );

  test(
    "graceful cancel whose window runs out aborts the tools' signal; a dispatched write is unknown",
    TIMEOUT,
    async () => {
      await watchdog(WATCHDOG_MS, async () => {
        const held = heldCalls();
        const { host, threads, threadId } = await open([holdCall(), { text: "never" }], [
          holdTool(held, "write"),
        ]);
        try {
          await sendGo(threads, threadId);
          await held.started;
          // The handler ignores its signal and never answers: the 5 s window runs out.
          const { view } = await threads.cancel({ threadId, requestKey: "soft", mode: "graceful" });
          assert.equal(held.contexts[0].signal.aborted, true, "aborted once the window ran out");
          assert.notEqual(view.status, "running");
          assert.equal(toolItems(view)[0]?.tool?.status, "unknown");
          assert.equal(view.turns.at(-1)?.outcome, "failed");
          assert.equal(view.turns.at(-1)?.failure?.code, "effect_outcome_unknown");
          held.release("too late");
          await new Promise((resolve) => setTimeout(resolve, 50));
          const after = await threads.view(threadId);
          assert.deepEqual(after.items, view.items);
        } finally {
          held.release("x");
          await host.shutdown();
        }
      });
    },
  );

  test(
    "a steer during a tool call leaves the tool's signal alone; the steer joins the next request",
    TIMEOUT,
    async () => {
      await watchdog(WATCHDOG_MS, async () => {
        const held = heldCalls();
        const { host, threads, threadId, gateway } = await open([holdCall(), { text: "steered" }], [
          holdTool(held),
        ]);
        try {
          await sendGo(threads, threadId);
          await held.started;
          const local = threads as unknown as ThreadServiceWave2;
          await local.steer({ threadId, requestKey: "steer", text: "also this" });
          assert.equal(held.contexts[0].signal.aborted, false, "a steer is no stop");
          held.release("held done");
          const view = await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
          assert.equal(view.turns.at(-1)?.outcome, "completed");
          assert.equal(held.contexts[0].signal.aborted, false);
          assert.deepEqual(toolItems(view).map((item) => item.tool?.output), ["held done"]);
          const last = gateway.requests.at(-1)!.messages;
          assert.ok(last.some((m) => m.role === "user" && m.text === "also this"));
        } finally {
          held.release("x");
          await host.shutdown();
        }
      });
    },
  );
});

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
