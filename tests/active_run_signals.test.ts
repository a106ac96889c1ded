// A run's abort signals are made on first need, yet read exactly as if they
// had existed from the start: a stop before the first read gives an aborted
// signal with the stop's reason; a stop after it aborts the signal already
// handed out (listeners hear it once); a graceful stop leaves the tools alone.
import { test } from "node:test";
import assert from "node:assert/strict";
import { defineAgent } from "@floret/engine";
import { scriptedGateway } from "@floret/engine/testing";
import { ActiveRun } from "../src/runtime/actor/active_run.ts";

const agent = defineAgent({ id: "a", systemPrompt: "s", gateway: scriptedGateway([]) });
const run = (): ActiveRun => new ActiveRun("turn_1", "run_1", agent);

test("a stop before the first read: both signals come out aborted with the stop's reason", () => {
  const r = run();
  r.stop("Cancelled by the host");
  assert.equal(r.stopRequested, true);
  for (const signal of [r.toolSignal, r.providerSignal]) {
    assert.equal(signal.aborted, true);
    assert.ok(signal.reason instanceof DOMException);
    assert.equal(signal.reason.name, "AbortError");
    assert.equal(signal.reason.message, "Cancelled by the host");
  }
  // A later stop does not replace the first reason.
  r.stop("Again");
  assert.equal(r.toolSignal.reason.message, "Cancelled by the host");
});

test("a stop after the first read aborts the signal already handed out, once", () => {
  const r = run();
  const tools = r.toolSignal;
  assert.equal(tools.aborted, false);
  assert.equal(r.toolSignal, tools, "one signal per run");
  let heard = 0;
  tools.addEventListener("abort", () => heard++);
  r.stop("Shutting down");
  r.stop("Shutting down again");
  assert.equal(tools.aborted, true);
  assert.equal(heard, 1);
  assert.equal(tools.reason.message, "Shutting down");
});

test("a graceful stop aborts the provider request, not the tools", () => {
  const r = run();
  r.stop("Graceful", "provider");
  assert.equal(r.providerSignal.aborted, true);
  assert.equal(r.toolSignal.aborted, false);
  r.stop("Now all");
  assert.equal(r.toolSignal.aborted, true);
  assert.equal(r.toolSignal.reason.message, "Now all");
  assert.equal(r.providerSignal.reason.message, "Graceful");
});
