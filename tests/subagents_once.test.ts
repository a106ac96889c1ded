// Exactly-once spawns (DESIGN.md §10 "Sub-agent precise points"): a spawn is
// keyed by the parent's call id, and a call that repeats a cut-off one under a
// new id adopts its child; neither starts a second child. (Real kills:
// subagents_crash.test.ts.)
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import { defineTool, type ThreadView } from "@floret/engine";
import { childAgent, family, rawOutputs, waitForSpawned } from "./support/subagents.ts";

const spawn = (agent: string, task: string) => ({
  name: "spawn_agent",
  arguments: { agent, task },
});

function toolItem(view: ThreadView, name: string) {
  return view.items.filter((item) => item.tool?.name === name).map((item) => item.tool!);
}

/** Holds its batch open until cancelled, while `holdRelease` is false. */
let holdRelease = false;
const holdTool = defineTool({
  name: "hold",
  description: "Holds until cancelled (first time), then returns",
  input: z.object({}),
  effect: "read",
  execute: async (_input, context) => {
    if (holdRelease) return "released";
    await new Promise((_resolve, reject) => {
      context.signal.addEventListener("abort", () => reject(context.signal.reason), { once: true });
    });
    return "never";
  },
});

describe("exactly once", () => {
  test("a spawn replayed with the same call id returns the same child and starts no second one", async () => {
    holdRelease = false;
    const f = await family(
      [
        // The spawn runs and creates its child; the sibling holds the batch open.
        {
          toolCalls: [{ ...spawn("alpha", "task"), callId: "call-1" }, {
            name: "hold",
            arguments: {},
          }],
        },
        // After the cancel, the retried turn sees the call cancelled and the model sends it again.
        { toolCalls: [{ ...spawn("alpha", "task"), callId: "call-1" }] },
        waitForSpawned,
        (request) => ({ text: `spawned ${rawOutputs(request, "spawn_agent").join(" ")}` }),
      ],
      [childAgent("alpha")],
      {
        tools: [holdTool],
      },
    );
    await f.threads.send({ threadId: f.threadId, requestKey: "s1", input: { text: "go" } });
    let children: { threadId: string }[] = [];
    for (let i = 0; i < 5000 && children.length === 0; i++) {
      await new Promise((r) => setTimeout(r, 10));
      children = (await f.threads.list({ parentThreadId: f.threadId })).threads;
    }
    assert.equal(children.length, 1);
    await f.threads.cancel({ threadId: f.threadId, requestKey: "c1" });
    const cancelled = await f.threads.view(f.threadId);
    assert.equal(toolItem(cancelled, "spawn_agent")[0].status, "cancelled");
    holdRelease = true;
    await f.threads.retry({ threadId: f.threadId, requestKey: "r1" });
    const view = await f.threads.waitForIdle(f.threadId, { timeoutMs: 10_000 });
    assert.equal(
      view.items.at(-1)?.text,
      // The spawn ran before the cancel: the model is never told it did not (DESIGN §11).
      `spawned The call was interrupted before its result was recorded. It may have run; ` +
        `it changes nothing outside the engine, so it is safe to call again. ` +
        `{"threadId":"${children[0].threadId}"}`,
    );
    const after = await f.threads.list({ parentThreadId: f.threadId });
    assert.deepEqual(after.threads.map((t) => t.threadId), [children[0].threadId]);
    const child = await f.threads.view(children[0].threadId);
    assert.equal(child.turns.length, 1, "the task was admitted once");
    await f.host.shutdown();
  });
});

describe("exactly once, under a new call id", () => {
  test("a spawn repeated after a cut-off call adopts its child once; a further identical spawn starts a new one", async () => {
    holdRelease = false;
    const f = await family(
      [
        {
          toolCalls: [{ ...spawn("alpha", "task"), callId: "first" }, {
            name: "hold",
            arguments: {},
          }],
        },
        { toolCalls: [{ ...spawn("alpha", "task"), callId: "second" }] },
        { toolCalls: [{ ...spawn("alpha", "task"), callId: "third" }] },
        { text: "done" },
      ],
      [childAgent("alpha")],
      { tools: [holdTool] },
    );
    await f.threads.send({ threadId: f.threadId, requestKey: "s1", input: { text: "go" } });
    let children: { threadId: string }[] = [];
    for (let i = 0; i < 5000 && children.length === 0; i++) {
      await new Promise((r) => setTimeout(r, 10));
      children = (await f.threads.list({ parentThreadId: f.threadId })).threads;
    }
    await f.threads.cancel({ threadId: f.threadId, requestKey: "c1" });
    holdRelease = true;
    await f.threads.retry({ threadId: f.threadId, requestKey: "r1" });
    const view = await f.threads.waitForIdle(f.threadId, { timeoutMs: 10_000 });
    const outputs = toolItem(view, "spawn_agent").map((t) => t.output);
    assert.equal(outputs[1], `{"threadId":"${children[0].threadId}"}`, "adopted");
    assert.notEqual(outputs[2], outputs[1], "adopted once only");
    const all = await f.threads.list({ parentThreadId: f.threadId });
    assert.equal(all.threads.length, 2);
    assert.equal((await f.threads.view(children[0].threadId)).turns.length, 1);
    await f.host.shutdown();
  });
});
