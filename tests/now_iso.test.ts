// Stored timestamps: the text of the current millisecond, formatted once per millisecond.
import { test } from "node:test";
import assert from "node:assert/strict";
import { nowIso } from "../src/journal/now_iso.ts";

test("nowIso is new Date().toISOString() of the clock's current millisecond", () => {
  const realNow = Date.now;
  try {
    let clock = Date.UTC(2026, 11, 1, 23, 10, 0, 5);
    Date.now = () => clock;
    assert.equal(nowIso(), "2026-12-01T23:10:00.005Z");
    assert.equal(nowIso(), "2026-12-01T23:10:00.005Z");
    clock += 1;
    assert.equal(nowIso(), "2026-12-01T23:10:00.006Z");
    clock -= 86_400_000; // a clock set back is followed too
    assert.equal(nowIso(), "2026-11-30T23:10:00.006Z");
  } finally {
    Date.now = realNow;
  }
  const before = new Date().toISOString();
  const now = nowIso();
  assert.ok(before <= now && now <= new Date().toISOString());
});
