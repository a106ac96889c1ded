// Precise points of DESIGN §8 / §10 and issue #9 about cancel: cancel while a
// question waits, partial text on an immediate cancel, and a graceful cancel's
// drain window.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import { defineTool } from "@floret/engine";
import { type ScriptStep } from "@floret/engine/testing";
import { deferred, engine, lastTurn, until } from "./support/engine.ts";
import {
  answer,
  askCity,
  heldTool,
  isCode,
  sendText,
  sendWait,
  settle,
  tools,
  writeCalls,
  writeEngine,
} from "./support/interactions.ts";

describe("cancel around interactions", () => {
  test("cancel while a question waits resolves it as cancelled, runs nothing, and a later answer conflicts", async () => {
    const e = await engine([askCity, { text: "never" }]);
    const waiting = await sendWait(e, "trip");
    const id = waiting.pending[0].id;
    const queued = await sendText(e, "queued while waiting", "q");
    assert.equal(queued.queued, true);
    const { view } = await e.threads.cancel({ threadId: e.threadId, requestKey: "x" });
    assert.equal(view.status, "idle");
    assert.deepEqual(view.pending, []);
    assert.equal(view.turns.at(-1)?.outcome, "cancelled");
    const item = view.items.find((i) => i.kind === "interaction");
    assert.equal(item?.interaction?.status, "resolved");
    assert.equal(view.queue.length, 1, "input queued behind a cancelled turn stays queued");
    await assert.rejects(
      answer(e, id, [{ questionId: "city", value: "Oslo" }], "late"),
      isCode("request_conflict"),
    );
    const again = await e.threads.cancel({ threadId: e.threadId, requestKey: "x2" });
    assert.equal(again.view.status, "idle", "cancel on an idle thread is no error");
    assert.equal(e.gateway.requests.length, 1, "nothing ran after the cancel");
    await e.host.shutdown();
  });

  test("graceful cancel while an approval waits runs nothing either", async () => {
    const { e, ran } = await writeEngine([writeCalls("a"), { text: "never" }]);
    await sendWait(e, "go");
    const { view } = await e.threads.cancel({
      threadId: e.threadId,
      requestKey: "x",
      mode: "graceful",
    });
    const idle = await settle(e);
    assert.notEqual(view.status, "running");
    assert.equal(idle.turns.at(-1)?.outcome, "cancelled");
    assert.equal(tools(idle)[0].status, "cancelled");
    assert.deepEqual(idle.pending, []);
    assert.deepEqual(ran, []);
    assert.equal(e.gateway.requests.length, 1);
    await e.host.shutdown();
  });

  test("immediate cancel keeps the text a provider had streamed so far", async () => {
    const e = await engine([{ hang: true, text: "the first half" } as ScriptStep]);
    await sendText(e, "go", "s");
    await until(e, (view) => view.items.some((item) => item.kind === "assistant"));
    const { view } = await e.threads.cancel({ threadId: e.threadId, requestKey: "c" });
    assert.notEqual(view.status, "running");
    assert.deepEqual(lastTurn(view), { outcome: "cancelled", code: undefined });
    const assistant = view.items.find((item) => item.kind === "assistant");
    assert.equal(assistant?.text, "the first half");
    assert.ok(!assistant?.live);
    await e.host.shutdown();
  });

  test("graceful cancel lets an in-flight tool commit its result inside the window; nothing more runs", async () => {
    const { tool: slow, gate, started, aborted } = heldTool({
      name: "slow",
      output: "finished",
      effect: "write",
    });
    const e = await engine([
      { toolCalls: [{ name: "slow", arguments: {} }] },
      { text: "never" },
    ], { tools: [slow] });
    await sendText(e, "go", "s");
    await started.promise;
    const cancelling = e.threads.cancel({
      threadId: e.threadId,
      requestKey: "c",
      mode: "graceful",
    });
    await until(e, (view) => view.status !== "running");
    gate.resolve();
    await cancelling;
    const idle = await settle(e);
    assert.equal(aborted(), false, "the tool was not aborted inside the window");
    assert.equal(tools(idle)[0].status, "completed");
    assert.equal(tools(idle)[0].output, "finished");
    assert.equal(idle.turns.at(-1)?.outcome, "cancelled");
    assert.equal(e.gateway.requests.length, 1, "the result never reaches a new request");
    await e.host.shutdown();
  });

  test("immediate cancel of a dispatched write whose result is unconfirmed: unknown, effect_outcome_unknown", async () => {
    const started = deferred();
    const hang = defineTool({
      name: "hang",
      description: "h",
      effect: "write",
      input: z.object({}),
      execute: async () => {
        started.resolve();
        await new Promise(() => {});
        return "never";
      },
    });
    const e = await engine([{ toolCalls: [{ name: "hang", arguments: {} }] }], { tools: [hang] });
    await sendText(e, "go", "s");
    await started.promise;
    const { view } = await e.threads.cancel({ threadId: e.threadId, requestKey: "c" });
    assert.notEqual(view.status, "running");
    assert.equal(tools(view)[0].status, "unknown");
    assert.deepEqual(lastTurn(view), { outcome: "failed", code: "effect_outcome_unknown" });
    await e.host.shutdown();
  });
});

describe("graceful cancel's window", () => {
  // The window is 5 s by contract; Bun's default per-test limit is also 5 s.
  test(
    "tools still running when the shared window closes: a write is unknown, a read cancelled, the turn failed",
    {
      timeout: 60_000,
    },
    async () => {
      let started = 0;
      const reached = deferred();
      const never = (name: string, effect: "write" | "read") =>
        defineTool({
          name,
          description: name,
          effect,
          input: z.object({}),
          // Ignores its abort signal: only the window can end the wait for it.
          execute: async () => {
            if (++started === 2) reached.resolve();
            await new Promise(() => {});
            return "never";
          },
        });
      const e = await engine([
        { toolCalls: [{ name: "w", arguments: {} }, { name: "r", arguments: {} }] },
        { text: "never" },
      ], { tools: [never("w", "write"), never("r", "read")] });
      await sendText(e, "go", "s");
      await reached.promise;
      // The third wave: the stop request is durable and answered at once (DESIGN §11).
      const { view: asked } = await e.threads.cancel({
        threadId: e.threadId,
        requestKey: "c",
        mode: "graceful",
      });
      assert.equal(asked.stopping?.mode, "graceful");
      const view = await e.threads.waitForIdle(e.threadId, { timeoutMs: 20_000 });
      assert.notEqual(view.status, "running");
      assert.notEqual(view.status, "stopping");
      assert.equal(view.stopping, undefined);
      assert.deepEqual(tools(view).map((t) => t.status), ["unknown", "cancelled"]);
      assert.deepEqual(lastTurn(view), { outcome: "failed", code: "effect_outcome_unknown" });
      assert.equal(e.gateway.requests.length, 1);
      await e.host.shutdown();
    },
  );
});
