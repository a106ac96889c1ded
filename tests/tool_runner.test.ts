// A tool batch: handlers start in call order before runBatch returns; a batch
// whose handlers all answered synchronously comes back settled, one with a
// handler still running as a promise; outcomes keep call order either way.
import { test } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import { defineTool, implementationOf } from "../src/tools/define_tool.ts";
import { runBatch } from "../src/engine/calls/tool_runner.ts";
import type { PlannedCall } from "../src/engine/calls/tool_calls.ts";

const started: string[] = [];

function planned(callId: string, execute: () => unknown): PlannedCall {
  const tool = implementationOf(defineTool({
    name: `t_${callId}`,
    description: "test",
    input: z.object({}),
    execute: () => {
      started.push(callId);
      return execute() as string;
    },
  }));
  return {
    record: { callId, name: `t_${callId}`, arguments: "{}", decision: "allow" },
    tool,
    input: {},
  };
}

const context = { threadId: "t", turnId: "u", runId: "r", signal: new AbortController().signal };
const ids = () => "artifact_1";

test("synchronous handlers: the batch comes back settled, outcomes in call order", () => {
  started.length = 0;
  const batch = runBatch(
    [planned("a", () => 1), planned("b", () => ({ output: "two", isError: true }))],
    context,
    ids,
  );
  assert.ok(!(batch instanceof Promise));
  assert.deepEqual(started, ["a", "b"]);
  assert.deepEqual(batch.outcomes, [
    { callId: "a", name: "t_a", status: "completed", output: "1" },
    { callId: "b", name: "t_b", status: "error", output: "two" },
  ]);
});

test("a handler still running: a promise, every handler started first, order kept", async () => {
  started.length = 0;
  let finish!: (value: string) => void;
  const batch = runBatch(
    [
      planned("slow", () => new Promise<string>((resolve) => finish = resolve)),
      planned("fast", () => "fast"),
      planned("throws", () => {
        throw new TypeError("broken");
      }),
    ],
    context,
    ids,
  );
  assert.ok(batch instanceof Promise);
  assert.deepEqual(started, ["slow", "fast", "throws"]);
  finish("slow");
  const { outcomes } = await batch;
  assert.deepEqual(outcomes.map((o) => [o.callId, o.status, o.output]), [
    ["slow", "completed", "slow"],
    ["fast", "completed", "fast"],
    ["throws", "error", "TypeError: broken"],
  ]);
});

test("a handler's context: ids, the batch's signal read on first use, its call id", () => {
  let reads = 0;
  const controller = new AbortController();
  const lazy = {
    threadId: "t",
    turnId: "u",
    runId: "r",
    get signal() {
      reads++;
      return controller.signal;
    },
  };
  const seen: Record<string, unknown>[] = [];
  const tool = implementationOf(defineTool({
    name: "peek",
    description: "test",
    input: z.object({}),
    execute: (_input, context) => {
      seen.push({ keys: Object.keys(context).join(",") });
      seen.push({ ...context });
      return "ok";
    },
  }));
  const call = (callId: string): PlannedCall => ({
    record: { callId, name: "peek", arguments: "{}", decision: "allow" },
    tool,
    input: {},
  });
  const quiet = runBatch([call("x")], lazy, ids);
  assert.ok(!(quiet instanceof Promise));
  assert.deepEqual(seen[0], { keys: "threadId,turnId,runId,signal,callId,labels" });
  assert.deepEqual(seen[1], {
    threadId: "t",
    turnId: "u",
    runId: "r",
    signal: controller.signal,
    callId: "x",
    labels: {},
  });
  assert.equal(reads, 1); // read once, by the spread above; never by the engine
});
