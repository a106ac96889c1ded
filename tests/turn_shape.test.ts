/**
 * `ViewModel` stores ended turns through `copyTurn` (turn_shape.ts), which
 * rebuilds the common shape by a literal: it must give what a spread gives —
 * same own keys, same order, same values — for every shape, as a new object.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { copyTurn } from "../src/projection/view/turn_shape.ts";
import type { TurnSummary } from "../src/projection/view/view_types.ts";
import { setup } from "./support/context_host.ts";

const at = "2026-12-01T00:00:00.000Z";
const ended = {
  outcome: "completed" as const,
  endedAt: at,
  durationMs: 5,
  elapsedMs: 5,
  waitingMs: 1,
  workMs: 4,
};

const shapes: Record<string, TurnSummary> = {
  running: { turnId: "t1", startedAt: at, finalItemIds: [] },
  "running with usage": {
    turnId: "t1",
    startedAt: at,
    finalItemIds: [],
    usage: { inputTokens: 3 },
  },
  "ended with usage": {
    turnId: "t1",
    startedAt: at,
    finalItemIds: ["a"],
    usage: { inputTokens: 3, outputTokens: 2 },
    ...ended,
  },
  "ended without usage": { turnId: "t1", startedAt: at, finalItemIds: [], ...ended },
  "a retry": {
    turnId: "t2",
    startedAt: at,
    finalItemIds: ["a"],
    retryOf: { turnId: "t1", mode: "resume" },
    usage: { inputTokens: 3 },
    ...ended,
  },
  "a failure": {
    turnId: "t1",
    startedAt: at,
    finalItemIds: [],
    usage: { inputTokens: 3 },
    ...ended,
    outcome: "failed",
    failure: { code: "provider_error", message: "no" },
  },
};

for (const [name, turn] of Object.entries(shapes)) {
  test(`copyTurn of ${name} equals its spread, keys in order, as a new object`, () => {
    const copy = copyTurn(turn);
    assert.notEqual(copy, turn);
    assert.deepEqual(copy, { ...turn });
    assert.deepEqual(Object.keys(copy), Object.keys(turn));
  });
}

test("a view's ended turn has the keys, in the order, that copyTurn's literal writes", async () => {
  const e = await setup();
  e.gateway.answers.push(
    { text: "one", usage: { inputTokens: 5, outputTokens: 1 } },
    { text: "two", usage: { inputTokens: 9, outputTokens: 1 } },
  );
  await e.say("first");
  const view = await e.say("second");
  for (const turn of view.turns) {
    assert.ok(turn.usage, "the gateway reported usage");
    assert.deepEqual(Object.keys(turn), [
      "turnId",
      "startedAt",
      "finalItemIds",
      "usage",
      "outcome",
      "endedAt",
      "durationMs",
      "elapsedMs",
      "waitingMs",
      "workMs",
    ]);
  }
  // A host changing its copy changes nothing the engine keeps.
  const kept = structuredClone(view.turns);
  view.turns[0].outcome = "failed";
  view.turns[0].finalItemIds.length = 0;
  assert.deepEqual((await e.threads.waitForIdle(e.threadId)).turns[0].outcome, kept[0].outcome);
  await e.host.shutdown();
});
