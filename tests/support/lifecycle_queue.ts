/**
 * Part of the lifecycle suite (lifecycle_suite.ts): the queue, cancel and
 * retry.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { FloretError } from "@floret/engine";
import { deferred, lastTurn, sendAndWait, until } from "./engine.ts";
import type { SuiteTools } from "./lifecycle_suite.ts";

const isCode = (code: string) => (error: unknown) =>
  error instanceof FloretError && error.code === code;

/**
 * Registers these tests.
 *
 * @param tools how the tests make an engine or wrap a service (in process or over HTTP)
 */
export function lifecycleQueue({ engine }: SuiteTools): void {
  describe("the queue", () => {
    test("input sent while running is queued and starts when the turn completes", async () => {
      const e = await engine([{ text: "first answer", delayMs: 50 }, { text: "second answer" }]);
      await e.threads.send({ threadId: e.threadId, requestKey: "a", input: { text: "one" } });
      const queued = await e.threads.send({
        threadId: e.threadId,
        requestKey: "b",
        input: { text: "two" },
      });
      assert.equal(queued.queued, true);
      assert.equal(queued.turnId, undefined);
      assert.deepEqual(queued.view.queue.map((q) => q.text), ["two"]);
      // waitForIdle never resolves between the end of turn 1 and the start of turn 2.
      const view = await e.threads.waitForIdle(e.threadId, { timeoutMs: 5000 });
      assert.equal(view.turns.length, 2);
      assert.deepEqual(view.queue, []);
      assert.deepEqual(view.items.filter((i) => i.kind === "assistant").map((i) => i.text), [
        "first answer",
        "second answer",
      ]);
      await e.host.shutdown();
    });

    test("after a failed turn the queue waits for promoteQueued or deleteQueued", async () => {
      const e = await engine([
        { error: { status: 400, retry: "never", message: "bad request" }, delayMs: 30 },
        { text: "promoted answer", delayMs: 100 },
      ]);
      await e.threads.send({ threadId: e.threadId, requestKey: "a", input: { text: "one" } });
      await e.threads.send({ threadId: e.threadId, requestKey: "b", input: { text: "two" } });
      await e.threads.send({ threadId: e.threadId, requestKey: "c", input: { text: "three" } });
      let view = await e.threads.waitForIdle(e.threadId, { timeoutMs: 5000 });
      assert.deepEqual(lastTurn(view), { outcome: "failed", code: "provider_error" });
      assert.equal(view.queue.length, 2);
      const [two, three] = view.queue;
      await e.threads.deleteQueued({ threadId: e.threadId, requestKey: "dq", queueId: three.id });
      const promoted = await e.threads.promoteQueued({
        threadId: e.threadId,
        requestKey: "pq",
        queueId: two.id,
      });
      assert.equal(promoted.view.status, "running");
      await assert.rejects(
        e.threads.promoteQueued({ threadId: e.threadId, requestKey: "pq2", queueId: two.id }),
        isCode("thread_busy"),
      );
      view = await e.threads.waitForIdle(e.threadId, { timeoutMs: 5000 });
      assert.deepEqual(lastTurn(view), { outcome: "completed", code: undefined });
      assert.deepEqual(view.queue, []);
      assert.equal(view.items.filter((i) => i.kind === "user").length, 2);
      await e.host.shutdown();
    });
  });

  describe("cancel", () => {
    test("immediate cancel commits the stop before it returns; idempotent; no-op when idle", async () => {
      const e = await engine([{ hang: true, text: "partial " }]);
      await e.threads.send({ threadId: e.threadId, requestKey: "a", input: { text: "go" } });
      await until(e, (view) => view.items.some((item) => item.kind === "assistant"));
      const { view } = await e.threads.cancel({ threadId: e.threadId, requestKey: "c1" });
      assert.equal(view.status, "idle");
      assert.deepEqual(lastTurn(view), { outcome: "cancelled", code: undefined });
      assert.equal(view.items.at(-1)?.text, "partial ");
      const again = await e.threads.cancel({
        threadId: e.threadId,
        requestKey: "c1",
        mode: "graceful",
      });
      assert.equal(again.view.turns.length, 1);
      const idle = await e.threads.cancel({ threadId: e.threadId, requestKey: "c2" });
      assert.equal(idle.view.status, "idle");
      await e.host.shutdown();
    });

    test("a side-effecting call in flight becomes unknown and the turn fails effect_outcome_unknown", async () => {
      const started = deferred();
      const { defineTool } = await import("@floret/engine");
      const { z } = await import("zod");
      const write = defineTool({
        name: "write_file",
        description: "Writes",
        effect: "write",
        input: z.object({ path: z.string() }),
        execute: (_input, context) =>
          new Promise<string>((_resolve, reject) => {
            started.resolve();
            context.signal.addEventListener("abort", () => reject(new Error("aborted")));
          }),
      });
      const e = await engine([{ toolCalls: [{ name: "write_file", arguments: { path: "a" } }] }], {
        tools: [write],
      });
      await e.threads.send({ threadId: e.threadId, requestKey: "a", input: { text: "go" } });
      await started.promise;
      const { view } = await e.threads.cancel({ threadId: e.threadId, requestKey: "c" });
      assert.deepEqual(lastTurn(view), { outcome: "failed", code: "effect_outcome_unknown" });
      assert.equal(view.items.find((i) => i.kind === "tool")?.tool?.status, "unknown");
      await assert.rejects(
        e.threads.retry({ threadId: e.threadId, requestKey: "r" }),
        isCode("no_retry_target"),
      );
      await e.host.shutdown();
    });

    test("graceful cancel lets in-flight tools commit their results", async () => {
      const started = deferred();
      const { defineTool } = await import("@floret/engine");
      const { z } = await import("zod");
      const slow = defineTool({
        name: "slow_write",
        description: "Writes slowly",
        effect: "write",
        input: z.object({}),
        execute: async () => {
          started.resolve();
          await new Promise((resolve) => setTimeout(resolve, 50));
          return "written";
        },
      });
      const e = await engine([{ toolCalls: [{ name: "slow_write", arguments: {} }] }, {
        text: "never asked",
      }], { tools: [slow] });
      await e.threads.send({ threadId: e.threadId, requestKey: "a", input: { text: "go" } });
      await started.promise;
      const cancelled = await e.threads.cancel({
        threadId: e.threadId,
        requestKey: "c",
        mode: "graceful",
      });
      // A graceful cancel commits the stop request and returns at once; the
      // turn settles when the in-flight tool has committed its result.
      assert.ok(cancelled.view.stopping, "the stop request shows on the view");
      const view = await e.threads.waitForIdle(e.threadId, { timeoutMs: 10_000 });
      assert.deepEqual(lastTurn(view), { outcome: "cancelled", code: undefined });
      assert.equal(view.stopping, undefined);
      assert.equal(view.items.find((i) => i.kind === "tool")?.tool?.status, "completed");
      assert.equal(e.gateway.requests.length, 1);
      await e.host.shutdown();
    });
  });

  describe("retry", () => {
    test("a failed turn resumes from its last save point, keeping completed tool results", async () => {
      const calls = { count: 0 };
      const { addTool } = await import("./engine.ts");
      const e = await engine([
        { toolCalls: [{ name: "add", arguments: { a: 1, b: 1 } }] },
        { error: { status: 400, retry: "never" } },
        { text: "resumed: 2" },
      ], { tools: [addTool(calls)] });
      let view = await sendAndWait(e, "1+1");
      assert.deepEqual(lastTurn(view), { outcome: "failed", code: "provider_error" });
      const retried = await e.threads.retry({
        threadId: e.threadId,
        requestKey: "r",
        turnId: view.turns[0].turnId,
      });
      assert.equal(retried.view.status, "running");
      view = await e.threads.waitForIdle(e.threadId, { timeoutMs: 5000 });
      assert.deepEqual(lastTurn(view), { outcome: "completed", code: undefined });
      assert.equal(calls.count, 1, "the completed tool call is not run again");
      assert.equal(
        view.items.filter((i) => i.kind === "user").length,
        1,
        "retry adds no user item",
      );
      assert.deepEqual(e.gateway.requests[2].messages.map((m) => m.role), [
        "system",
        "user",
        "assistant",
        "tool",
      ]);
      assert.equal(view.turns[1].retryOf?.mode, "resume");
      await e.host.shutdown();
    });

    test("a completed turn is regenerated from its user message; the old answer stays in the view", async () => {
      const e = await engine([{ text: "old answer" }, { text: "new answer" }]);
      await sendAndWait(e, "question");
      await e.threads.retry({ threadId: e.threadId, requestKey: "r" });
      const view = await e.threads.waitForIdle(e.threadId, { timeoutMs: 5000 });
      assert.deepEqual(view.items.map((i) => i.text), ["question", "old answer", "new answer"]);
      assert.deepEqual(e.gateway.requests[1].messages.map((m) => m.role), ["system", "user"]);
      await e.host.shutdown();
    });

    test("retry refusals: no turns, not the latest turn, busy", async () => {
      const e = await engine([{ text: "a" }, { hang: true }]);
      await assert.rejects(
        e.threads.retry({ threadId: e.threadId, requestKey: "r0" }),
        isCode("no_retry_target"),
      );
      const view = await sendAndWait(e, "q");
      await assert.rejects(
        e.threads.retry({ threadId: e.threadId, requestKey: "r1", turnId: "turn_other" }),
        isCode("no_retry_target"),
      );
      await e.threads.retry({
        threadId: e.threadId,
        requestKey: "r2",
        turnId: view.turns[0].turnId,
      });
      await assert.rejects(
        e.threads.retry({ threadId: e.threadId, requestKey: "r3" }),
        isCode("thread_busy"),
      );
      await e.threads.cancel({ threadId: e.threadId, requestKey: "c" });
      await e.host.shutdown();
    });
  });
}
