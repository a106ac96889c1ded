/**
 * The view model builds its most common replacements (a tool's first result,
 * a running turn's usage) as literals instead of spreads: the items and turns
 * it makes must keep exactly the keys, in exactly the order, and the values
 * the spreads gave, which hosts see through views and JSON.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import type { Entry } from "../src/journal/entries.ts";
import { Interactions } from "../src/projection/interactions.ts";
import { ViewModel } from "../src/projection/view/view_model.ts";

const AT = "2026-12-02T01:00:00.000Z";
const LATER = "2026-12-02T01:00:01.000Z";
const base = { turnId: "t1", at: AT };

function model(): ViewModel {
  const sink = { hasSubscribers: false, push() {}, touch() {} };
  return new ViewModel(sink, new Interactions());
}

/** Entries as plain objects (their `seq` is given here, in order). */
function feed(view: ViewModel, entries: object[]): void {
  let seq = 0;
  for (const entry of entries) view.apply({ ...entry, seq: ++seq } as Entry);
}

const started = {
  ...base,
  kind: "turn_started",
  runId: "r1",
  agentId: "a",
  requestKey: "k",
  input: { text: "hi" },
} as const;

const step = {
  ...base,
  kind: "step",
  runId: "r1",
  step: 0,
  text: "",
  calls: [
    { callId: "c1", name: "add", arguments: "{}", decision: "allow" },
    { callId: "c2", name: "add", arguments: "{}", decision: "deny" },
  ],
  finish: "tool_calls",
  stateKey: "s",
  usage: { inputTokens: 2, outputTokens: 3 },
} as const;

describe("view model shapes", () => {
  test("a tool's first result: the spread's keys and values, in its order", () => {
    const view = model();
    feed(view, [started, step, {
      ...base,
      at: LATER,
      kind: "tool_results",
      runId: "r1",
      results: [
        { callId: "c1", name: "add", status: "completed", output: "5" },
        { callId: "c2", name: "add", status: "denied", output: "no", artifactId: "art1" },
      ],
    }]);
    const ran = view.item("tool_r1_0_c1") ?? view.items.at(1)!;
    assert.deepEqual(Object.keys(ran), [
      "id",
      "ordinal",
      "kind",
      "turnId",
      "runId",
      "createdAt",
      "tool",
    ]);
    assert.deepEqual(Object.entries(ran.tool!), [
      ["callId", "c1"],
      ["name", "add"],
      ["arguments", "{}"],
      ["status", "completed"],
      ["startedAt", AT],
      ["output", "5"],
      ["endedAt", LATER],
    ]);
    // A denied call never started: no `startedAt` key at all; the artifact sits before `endedAt`.
    assert.deepEqual(Object.entries(view.items.at(2)!.tool!), [
      ["callId", "c2"],
      ["name", "add"],
      ["arguments", "{}"],
      ["status", "denied"],
      ["output", "no"],
      ["artifactId", "art1"],
      ["endedAt", LATER],
    ]);
  });

  test("a second result of the same call replaces values in place and drops a stale artifact", () => {
    const view = model();
    const results = (output: string, artifactId?: string) => ({
      ...base,
      kind: "tool_results",
      runId: "r1",
      results: [{
        callId: "c1",
        name: "add",
        status: "completed",
        output,
        ...(artifactId ? { artifactId } : {}),
      }],
    });
    feed(view, [started, step, results("1", "art"), results("2")]);
    assert.deepEqual(Object.entries(view.items.at(1)!.tool!), [
      ["callId", "c1"],
      ["name", "add"],
      ["arguments", "{}"],
      ["status", "completed"],
      ["startedAt", AT],
      ["output", "2"],
      ["endedAt", AT],
    ]);
  });

  test("a running turn's usage: keys in the spread's order, sums per field", () => {
    const view = model();
    feed(view, [started, step, { ...step, step: 1, calls: [] }]);
    const turn = view.turns.at(0)!;
    assert.deepEqual(Object.keys(turn), ["turnId", "startedAt", "finalItemIds", "usage"]);
    assert.deepEqual(turn.usage, { inputTokens: 4, outputTokens: 6 });
    // A retry keeps `retryOf` before the usage (the spread's order).
    const retried = model();
    feed(retried, [{ ...started, retryOf: { turnId: "t0", mode: "resume" } }, step]);
    assert.deepEqual(Object.keys(retried.turns.at(0)!), [
      "turnId",
      "startedAt",
      "finalItemIds",
      "retryOf",
      "usage",
    ]);
  });
});
