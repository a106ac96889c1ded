/**
 * A live item, once its step is settled, takes no more deltas: a stopped
 * stream that yields after a cancel's commit landed (and before the run was
 * let go) must not append to the settled text, nor publish an `append-text`
 * after the settled item's `replace`.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import type { Entry } from "../src/journal/entries.ts";
import { Interactions } from "../src/projection/interactions.ts";
import { ViewModel } from "../src/projection/view/view_model.ts";
import type { ViewOp } from "../src/projection/view/view_types.ts";

const AT = "2026-12-02T01:00:00.000Z";

test("a delta for a step already settled is ignored, in the view and in the ops", () => {
  const ops: ViewOp[] = [];
  const sink = { hasSubscribers: true, push: (op: ViewOp) => void ops.push(op), touch() {} };
  const view = new ViewModel(sink, new Interactions());
  let seq = 0;
  const apply = (entry: object) => view.apply({ ...entry, seq: ++seq } as Entry);
  apply({
    kind: "turn_started",
    turnId: "t1",
    at: AT,
    runId: "r1",
    agentId: "a",
    requestKey: "k",
    input: { text: "hi" },
  });
  view.liveDelta("t1", "r1", 0, "assistant", "abc");
  view.liveDelta("t1", "r1", 0, "assistant", "d");
  apply({
    kind: "step",
    turnId: "t1",
    at: AT,
    runId: "r1",
    step: 0,
    text: "abcd",
    calls: [],
    finish: "stop",
    stateKey: "s",
  });
  const settled = view.items.at(-1)!;
  assert.equal(settled.text, "abcd");
  assert.equal(settled.live, undefined);
  const before = ops.length;
  view.liveDelta("t1", "r1", 0, "assistant", " late");
  assert.equal(view.items.at(-1)!.text, "abcd");
  assert.deepEqual(ops.slice(before), []);
  assert.deepEqual(
    ops.filter((op) => op.op === "append-text").map((op) => op.op === "append-text" && op.offset),
    [3],
  );
});
