// A turn's end writes the record without its active and waiting marks: the
// record must keep exactly the key order (and so the stored JSON) that a spread
// with those keys deleted gives, whichever optional fields the record holds.
import { test } from "node:test";
import assert from "node:assert/strict";
import { planTurnEnd } from "../src/runtime/turns/turn_end.ts";
import type { ThreadRecord } from "../src/journal/thread_record.ts";

/** The end's record as a spread plus deletes would make it (the reference). */
function reference(record: ThreadRecord, next: ThreadRecord): ThreadRecord {
  const made: ThreadRecord = {
    ...record,
    updatedAt: next.updatedAt,
    status: "idle",
    lastTurn: next.lastTurn,
  };
  delete made.active;
  delete made.waiting;
  return made;
}

const base: ThreadRecord = {
  id: "thread_1",
  title: "t",
  createdAt: "2026-12-01T00:00:00.000Z",
  updatedAt: "2026-12-01T00:00:01.000Z",
  seq: 4,
  status: "running",
  active: { turnId: "turn_1", runId: "run_1" } as ThreadRecord["active"],
  queue: [],
  titleStatus: "fallback",
};

test("the turn-end record has the keys and order of the spread with active and waiting deleted", () => {
  const shapes: ThreadRecord[] = [
    base,
    { ...base, lastTurn: { turnId: "turn_0", retryable: false } },
    { ...base, waiting: { turnId: "turn_1", runId: "run_1" } },
    (({ active: _active, ...rest }) => rest)(base),
    { ...base, lastTurn: { turnId: "turn_0", retryable: true }, deleted: false },
  ];
  for (const record of shapes) {
    for (const failure of [undefined, { code: "provider_error", message: "m" }] as const) {
      const before = JSON.stringify(record);
      const { record: next, entries } = planTurnEnd(record, {
        turnId: "turn_1",
        runId: "run_1",
        outcome: failure ? "failed" : "completed",
        failure: failure as never,
      });
      assert.equal(JSON.stringify(next), JSON.stringify(reference(record, next)));
      assert.equal("active" in next || "waiting" in next, false);
      assert.equal(next.lastTurn?.retryable, record.lastTurn?.retryable !== false);
      assert.equal(next.lastTurn?.code, failure?.code);
      assert.equal(entries[0].kind, "turn_ended");
      // The record it was planned on is left as it was.
      assert.equal(JSON.stringify(record), before);
    }
  }
});
