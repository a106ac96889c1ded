// Audit (round 11) of a run's tools through the public API: the tool's
// AbortSignal (context.signal) is made lazily since round 6, so it must still
// come out aborted after an immediate cancel, a delete or a shutdown even when
// the handler never read it before, must stay unaborted for runs nobody
// stopped (and for an earlier run when a later one is stopped), and a
// graceful cancel leaves it alone while the tools' window lasts. (Call ids
// reused by providers and non-Error rejections: audit_lifecycle_tool_calls.)
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import { defineTool, type ThreadServiceWave2, type ToolContext } from "@floret/engine";
import { TIMEOUT, watchdog } from "./support/robust.ts";
import {
  heldCalls,
  holdCall,
  holdTool,
  open,
  quickTool,
  sendGo,
  toolItems,
  WATCHDOG_MS,
} from "./support/audit_tools.ts";

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
            return held.wait();
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
        for (let i = 0; i < 4000 && contexts.length < 2; i++) {
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
          // The stop request is answered at once (DESIGN §11); the turn settles after.
          await cancelling;
          const view = await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
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
          const { view: asked } = await threads.cancel({
            threadId,
            requestKey: "soft",
            mode: "graceful",
          });
          assert.equal(asked.stopping?.mode, "graceful", "answered at once, durably");
          const view = await threads.waitForIdle(threadId, { timeoutMs: 20_000 });
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
    "a steer during a write call leaves the tool's signal alone; the steer joins the next request",
    TIMEOUT,
    async () => {
      await watchdog(WATCHDOG_MS, async () => {
        const held = heldCalls();
        // A write: the third wave ends `read`/`none` calls on a steer (steer_tools.test.ts).
        const { host, threads, threadId, gateway } = await open([holdCall(), { text: "steered" }], [
          holdTool(held, "write"),
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
