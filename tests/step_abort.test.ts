// A run's step switch (a plain object in place of an AbortController): it
// stops once, with its first reason, and tells each engine watcher once. A
// plain signal as a switch says what the signal says.
import { test } from "node:test";
import assert from "node:assert/strict";
import { signalSwitch, StepAbort } from "../src/engine/attempt/step_abort.ts";

test("a step switch stops once, with its first reason, telling each watcher once", () => {
  const step = new StepAbort();
  const heard: string[] = [];
  const first = (): void => void heard.push(`first ${String(step.reason)}`);
  const second = (): void => void heard.push(`second ${String(step.aborted)}`);
  const gone = (): void => void heard.push("gone");
  step.watch(first);
  step.watch(first); // the same watcher twice is one
  step.watch(gone);
  step.watch(second);
  step.unwatch(gone);
  step.unwatch(gone); // not watching: nothing
  assert.equal(step.aborted, false);
  assert.equal(step.reason, undefined);
  step.abort("stopped");
  step.abort("steered");
  assert.equal(step.aborted, true);
  assert.equal(step.reason, "stopped");
  assert.deepEqual(heard, ["first stopped", "second true"]);
});

test("a plain signal as a switch reads and watches the signal", () => {
  const controller = new AbortController();
  const stop = signalSwitch(controller.signal);
  let heard = 0;
  const watcher = (): void => void heard++;
  const gone = (): void => void heard++;
  stop.watch(watcher);
  stop.watch(gone);
  stop.unwatch(gone);
  assert.equal(stop.aborted, false);
  assert.equal(stop.reason, undefined);
  controller.abort("limit");
  assert.equal(stop.aborted, true);
  assert.equal(stop.reason, "limit");
  assert.equal(heard, 1);
});
