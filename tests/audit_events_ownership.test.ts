// Audit (round 11): what a subscriber receives is its own. ThreadView's
// contract says a host may "edit it, apply update batches to it in place, keep
// it": a host that applies ops without copying them (taking `op.item` and
// `op.value` into its view as they come) and then edits its view must change
// nothing in the engine, and must not change what another subscriber of the
// same thread holds.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import {
  defineAgent,
  defineTool,
  memoryStore,
  openHost,
  type ThreadItem,
  type ThreadService,
  type ThreadUpdate,
  type ThreadView,
  type ViewOp,
} from "@floret/engine";
import { scriptedGateway, type ScriptStep } from "@floret/engine/testing";

/** Applies ops the trusting way: whatever an op carries goes into the view as it is. */
function applyInPlace(view: ThreadView, ops: readonly ViewOp[]): void {
  for (const op of ops) {
    if (op.op === "add") view.items.push(op.item);
    else if (op.op === "replace") {
      view.items[view.items.findIndex((item) => item.id === op.item.id)] = op.item;
    } else if (op.op === "append-text") {
      const item = view.items.find((candidate) => candidate.id === op.itemId) as ThreadItem;
      item.text = (item.text ?? "") + op.text;
    } else if (op.op === "remove") {
      view.items = view.items.filter((item) => item.id !== op.itemId);
    } else if (op.op === "component") {
      (view as unknown as Record<string, unknown>)[op.name] = op.value;
    }
  }
}

/** A subscriber with its own view, fed in place. */
async function follow(threads: ThreadService, threadId: string) {
  const controller = new AbortController();
  const updates = threads.subscribe(threadId, { signal: controller.signal })
    [Symbol.asyncIterator]();
  const view = await threads.view(threadId);
  return {
    view,
    async until(version: number): Promise<void> {
      while (view.viewVersion < version) {
        const next = await updates.next();
        assert.equal(next.done, false);
        const update = next.value as ThreadUpdate;
        assert.equal(update.type, "batch");
        if (update.type !== "batch" || update.version <= view.viewVersion) continue;
        applyInPlace(view, update.ops as ViewOp[]);
        view.viewVersion = update.version;
      }
    },
    stop: () => controller.abort(),
  };
}

const todoSteps: ScriptStep[] = [
  {
    toolCalls: [{
      name: "todo_write",
      arguments: { todos: [{ id: "a", text: "first", status: "in_progress" }] },
    }],
  },
  { toolCalls: [{ name: "echo", arguments: { text: "hi" } }] },
  { text: "streamed answer that grows", delayMs: 2 },
];

async function setUp(steps: ScriptStep[]) {
  const echo = defineTool({
    name: "echo",
    description: "Echoes",
    input: z.object({ text: z.string() }),
    execute: ({ text }) => text,
  });
  const host = await openHost({ store: memoryStore() });
  const threads = host.threads({
    agent: defineAgent({
      id: "own",
      systemPrompt: "Own.",
      gateway: scriptedGateway(steps),
      tools: [echo],
    }),
  });
  const { threadId } = await threads.create({ requestKey: "create" });
  return { host, threads, threadId };
}

describe("batches a subscriber applies in place are its own", () => {
  test("editing items, tool calls, turns and todos taken from batches changes no later view", async () => {
    const { host, threads, threadId } = await setUp(todoSteps);
    const watcher = await follow(threads, threadId);
    await threads.send({ threadId, requestKey: "go", input: { text: "go" } });
    const settled = await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
    await watcher.until(settled.viewVersion);
    const mine = watcher.view;
    assert.deepEqual(
      mine.items.map((item) => item.kind),
      settled.items.map((item) => item.kind),
    );
    // The host edits the view it owns: every item, tool call, turn and todo.
    for (const item of mine.items) {
      item.text = "edited";
      if (item.tool) {
        item.tool.status = "error";
        item.tool.output = "edited";
      }
    }
    for (const turn of mine.turns) {
      turn.outcome = "failed";
      turn.finalItemIds.push("edited");
    }
    for (const todo of mine.todos) todo.text = "edited";
    const after = await threads.view(threadId);
    assert.deepEqual(after.items, settled.items);
    assert.deepEqual(after.turns, settled.turns);
    assert.deepEqual(after.todos, settled.todos);
    watcher.stop();
    await host.shutdown();
  });

  test("two subscribers applying in place do not see each other's edits or appends", async () => {
    const { host, threads, threadId } = await setUp([
      { text: "ab", delayMs: 1 },
    ]);
    const one = await follow(threads, threadId);
    const two = await follow(threads, threadId);
    await threads.send({ threadId, requestKey: "go", input: { text: "go" } });
    const settled = await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
    await one.until(settled.viewVersion);
    await two.until(settled.viewVersion);
    assert.deepEqual(two.view.items, settled.items, "the second follows the thread exactly");
    for (const item of one.view.items) item.text = "only mine";
    assert.deepEqual(two.view.items, settled.items, "the first's edits stay the first's");
    one.stop();
    two.stop();
    await host.shutdown();
  });
});
