// Waiting for a tool batch: a batch that settled as it ran is neither tracked
// nor bounded, but a stop that came meanwhile still ends the run; a batch in
// flight is tracked and ends with the tool signal.
import { test } from "node:test";
import assert from "node:assert/strict";
import { settledBatch } from "../src/engine/calls/settled_batch.ts";
import type { RunHost } from "../src/engine/run/run_loop.ts";
import type { BatchResult } from "../src/engine/calls/tool_runner.ts";

function hostWith(controller: AbortController): { host: RunHost; tracked: Promise<unknown>[] } {
  const tracked: Promise<unknown>[] = [];
  const host = {
    toolSignal: controller.signal,
    stopRequested: () => controller.signal.aborted,
    batchStarted: (batch: Promise<unknown>) => tracked.push(batch),
  } as unknown as RunHost;
  return { host, tracked };
}

const settled: BatchResult = { outcomes: [], artifacts: [], inputs: [], rejectedActivity: [] };

test("a settled batch comes back as it is, untracked", () => {
  const { host, tracked } = hostWith(new AbortController());
  assert.equal(settledBatch(host, settled), settled);
  assert.equal(tracked.length, 0);
});

test("a settled batch after the tools were told to stop throws the stop's reason", () => {
  const controller = new AbortController();
  const { host } = hostWith(controller);
  const reason = new Error("cancelled");
  controller.abort(reason);
  assert.throws(() => settledBatch(host, settled), (error) => error === reason);
});

test("a batch in flight is tracked and rejects once the tools are told to stop", async () => {
  const controller = new AbortController();
  const { host, tracked } = hostWith(controller);
  const never = new Promise<BatchResult>(() => {});
  const waiting = settledBatch(host, never);
  assert.ok(waiting instanceof Promise);
  assert.deepEqual(tracked, [never]);
  const reason = new Error("shutdown");
  controller.abort(reason);
  await assert.rejects(waiting as Promise<BatchResult>, (error) => error === reason);
});

test("a batch in flight settles with its result", async () => {
  const { host } = hostWith(new AbortController());
  assert.equal(await settledBatch(host, Promise.resolve(settled)), settled);
});
