/**
 * The subscribe suite, run in-process (engine_updates.test.ts) and through
 * `threadClient` over `threadApi` (http_updates.test.ts).
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import type { ThreadItem, ThreadService, ThreadUpdate, ThreadView, ViewOp } from "@floret/engine";
import { engine as inProcessEngine, type TestEngine } from "./engine.ts";

/** Applies one batch to a view the way a host would. */
function apply(view: ThreadView, ops: ViewOp[]): void {
  for (const op of ops) {
    switch (op.op) {
      case "add":
        view.items.push(structuredClone(op.item));
        break;
      case "replace":
        view.items[view.items.findIndex((i) => i.id === op.item.id)] = structuredClone(op.item);
        break;
      case "append-text": {
        const item = view.items.find((i) => i.id === op.itemId) as ThreadItem;
        assert.equal(
          new TextEncoder().encode(item.text ?? "").length,
          op.offset,
          "offsets are UTF-8 byte offsets",
        );
        item.text = (item.text ?? "") + op.text;
        break;
      }
      case "remove":
        view.items = view.items.filter((i) => i.id !== op.itemId);
        break;
      case "component":
        if (op.name === "status") view.status = op.value as ThreadView["status"];
        if (op.name === "turns") view.turns = structuredClone(op.value) as ThreadView["turns"];
        if (op.name === "queue") view.queue = structuredClone(op.value) as ThreadView["queue"];
        break;
    }
  }
}

/**
 * Registers the subscribe suite.
 *
 * @param wrap turns the in-process service into the one the tests use
 */
export function updatesSuite(wrap: (threads: ThreadService) => ThreadService): void {
  const engine = async (...args: Parameters<typeof inProcessEngine>): Promise<TestEngine> => {
    const e = await inProcessEngine(...args);
    return { ...e, threads: wrap(e.threads) };
  };

  describe("subscribe", () => {
    test("batches are continuous and rebuild the settled view; text streams in place", async () => {
      const e = await engine([
        { toolCalls: [{ name: "add", arguments: { a: 1, b: 1 } }] },
        { text: "héllo wörld, this streams 🌼", reasoning: "thinking…", delayMs: 5 },
      ]);
      const controller = new AbortController();
      const updates = e.threads.subscribe(e.threadId, { signal: controller.signal });
      const start = await e.threads.view(e.threadId);
      const local = structuredClone(start);
      await e.threads.send({ threadId: e.threadId, requestKey: "s", input: { text: "go" } });
      let last = start.viewVersion;
      let sawLive = false;
      for await (const update of updates as AsyncIterable<ThreadUpdate>) {
        assert.equal(update.type, "batch");
        if (update.type !== "batch") break;
        if (update.version <= start.viewVersion) continue;
        assert.equal(update.baseVersion, last, "no gaps");
        last = update.version;
        sawLive ||= update.ops.some((op) => op.op === "add" && op.item.live === true);
        apply(local, update.ops as ViewOp[]);
        if (local.status === "idle" && local.turns[0]?.outcome) break;
      }
      controller.abort();
      const settled = await e.threads.view(e.threadId);
      assert.ok(sawLive, "live items were published while streaming");
      assert.deepEqual(local.items, settled.items);
      assert.deepEqual(local.turns, settled.turns);
      assert.deepEqual(settled.items.map((i) => i.kind), ["user", "tool", "thinking", "assistant"]);
      await e.host.shutdown();
    });

    test("a subscriber that falls behind gets resync and the engine keeps running", async () => {
      const steps = Array.from(
        { length: 80 },
        (_, i) => ({ toolCalls: [{ name: "add", arguments: { a: i, b: 1 } }] }),
      );
      const e = await engine([...steps, { text: "done" }], { agent: { maxSteps: 100 } });
      const updates = e.threads.subscribe(e.threadId)[Symbol.asyncIterator]();
      await e.threads.send({ threadId: e.threadId, requestKey: "s", input: { text: "go" } });
      const view = await e.threads.waitForIdle(e.threadId, { timeoutMs: 10_000 });
      assert.equal(view.items.at(-1)?.text, "done");
      const first = await updates.next();
      assert.deepEqual(first.value, { type: "resync", reason: "subscriber fell behind" });
      await updates.return?.();
      await e.host.shutdown();
    });

    test("aborting or breaking ends the iteration; subscribe registers at once; shutdown ends subscriptions", async () => {
      const e = await engine([{ text: "x" }]);
      const controller = new AbortController();
      const updates = e.threads.subscribe(e.threadId, { signal: controller.signal })
        [Symbol.asyncIterator]();
      await e.threads.send({ threadId: e.threadId, requestKey: "s", input: { text: "go" } });
      const first = await updates.next();
      assert.equal(first.done, false, "updates made before the first next() are delivered");
      controller.abort();
      for (;;) if ((await updates.next()).done) break;
      const other = e.threads.subscribe(e.threadId)[Symbol.asyncIterator]();
      const pending = other.next();
      await e.threads.waitForIdle(e.threadId, { timeoutMs: 5000 });
      await e.host.shutdown();
      let result = await pending;
      while (!result.done) result = await other.next();
      assert.equal(result.done, true);
    });

    test("subscribing to an unknown thread fails with thread_not_found", async () => {
      const e = await engine([]);
      const updates = e.threads.subscribe("thread_missing")[Symbol.asyncIterator]();
      await assert.rejects(
        updates.next(),
        (error: unknown) => (error as { code?: string }).code === "thread_not_found",
      );
      await e.host.shutdown();
    });
  });
}
