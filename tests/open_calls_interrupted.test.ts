// The open-calls projection's list of interrupted calls: what a resumed retry
// runs again (DESIGN §11 "Spawn after a crash"). Only safe calls that may have
// run, only when their turn ended `interrupted`, and only until the model or
// a real result moves past them.
import { test } from "node:test";
import assert from "node:assert/strict";
import type { Entry } from "../src/journal/entries.ts";
import { OpenCalls } from "../src/projection/open_calls.ts";

let seq = 0;
const at = "2026-01-01T00:00:00.000Z";

function started(turnId: string, retryOf?: "resume" | "regenerate"): Entry {
  const entry: Entry = {
    kind: "turn_started",
    seq: ++seq,
    at,
    turnId,
    runId: `${turnId}-run`,
    agentId: "a",
    requestKey: turnId,
  };
  if (retryOf) entry.retryOf = { turnId: "t1", mode: retryOf };
  else entry.input = { text: "go" };
  return entry;
}

function step(turnId: string, calls: { callId: string; pending?: boolean }[] = []): Entry {
  return {
    kind: "step",
    seq: ++seq,
    at,
    turnId,
    runId: `${turnId}-run`,
    step: 0,
    text: "",
    calls: calls.map(({ callId, pending }) => ({
      callId,
      name: "look",
      arguments: "{}",
      decision: pending ? "ask" : "allow",
      ...(pending ? { interactionId: `i-${callId}` } : {}),
    })),
    finish: calls.length ? "tool_calls" : "stop",
    stateKey: "",
  } as Entry;
}

function results(turnId: string, callIds: string[], status: "cancelled" | "completed"): Entry {
  return {
    kind: "tool_results",
    seq: ++seq,
    at,
    turnId,
    runId: "t1-run",
    results: callIds.map((callId) => ({ callId, name: "look", status, output: "x" })),
  };
}

function ended(turnId: string, outcome: "interrupted" | "cancelled", code?: string): Entry {
  return {
    kind: "turn_ended",
    seq: ++seq,
    at,
    turnId,
    outcome,
    ...(code ? { failure: { code, message: "m" } } : {}),
  } as Entry;
}

function fed(...entries: Entry[]): OpenCalls {
  const calls = new OpenCalls();
  for (const entry of entries) calls.apply(entry);
  return calls;
}

const ids = (calls: OpenCalls) => calls.interrupted().map((call) => [call.callId, call.turnId]);

test("a crash-interrupted turn's running safe calls are interrupted; unstarted ones are not", () => {
  const calls = fed(
    started("t1"),
    step("t1", [{ callId: "c1" }, { callId: "c2", pending: true }]),
    results("t1", ["c1", "c2"], "cancelled"),
    ended("t1", "interrupted", "interrupted"),
  );
  assert.deepEqual(ids(calls), [["c1", "t1"]]);
  assert.equal(calls.interrupted()[0].runId, "t1-run");
});

test("a cancelled turn, or one stopped by a restore, leaves nothing to run again", () => {
  const body = [started("t1"), step("t1", [{ callId: "c1" }]), results("t1", ["c1"], "cancelled")];
  assert.deepEqual(ids(fed(...body, ended("t1", "cancelled"))), []);
  assert.deepEqual(ids(fed(...body, ended("t1", "interrupted", "restored_turn"))), []);
});

test("a resume keeps them until a result for them or a step; other turns drop them", () => {
  const body = [
    started("t1"),
    step("t1", [{ callId: "c1" }, { callId: "c2" }]),
    results("t1", ["c1", "c2"], "cancelled"),
    ended("t1", "interrupted", "interrupted"),
  ];
  const resumed = fed(...body, started("t2", "resume"));
  assert.deepEqual(ids(resumed), [["c1", "t1"], ["c2", "t1"]]);
  resumed.apply(results("t2", ["c1"], "completed"));
  assert.deepEqual(ids(resumed), [["c2", "t1"]]);
  // Interrupted again before its re-run answered: the next resume still has it.
  resumed.apply(ended("t2", "interrupted", "interrupted"));
  resumed.apply(started("t3", "resume"));
  assert.deepEqual(ids(resumed), [["c2", "t1"]]);
  resumed.apply(step("t3"));
  assert.deepEqual(ids(resumed), []);

  assert.deepEqual(ids(fed(...body, started("t2"))), [], "a new message moves on");
  assert.deepEqual(ids(fed(...body, started("t2", "regenerate"))), []);
});

test("a steered call answered by a later step is never promoted by a later crash", () => {
  const calls = fed(
    started("t1"),
    step("t1", [{ callId: "c1" }]),
    results("t1", ["c1"], "cancelled"),
    step("t1", [{ callId: "c2" }]),
    results("t1", ["c2"], "completed"),
    ended("t1", "interrupted", "interrupted"),
  );
  assert.deepEqual(ids(calls), []);
});
