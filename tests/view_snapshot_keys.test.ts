/**
 * A view's keys come in one order, which hosts see through JSON: the thread
 * id, the title state (a present title after its generation), the status,
 * the lists, the version, then the optional parts. `viewSnapshot` builds the
 * head as literals instead of spreading the title state; these tests pin the
 * order and the values that spread gave.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import type { ThreadRecord } from "../src/journal/thread_record.ts";
import { Interactions } from "../src/projection/interactions.ts";
import { ViewModel } from "../src/projection/view/view_model.ts";
import { viewSnapshot } from "../src/runtime/actor/view_snapshot.ts";

const AT = "2026-12-02T01:00:00.000Z";

function snapshotOf(record: ThreadRecord, extra: { runProgress?: boolean } = {}) {
  const sink = { hasSubscribers: false, push() {}, touch() {} };
  const interactions = new Interactions();
  return viewSnapshot({
    record,
    status: record.status,
    view: new ViewModel(sink, interactions),
    interactions,
    viewVersion: 7,
    runProgress: extra.runProgress ? { phase: "model", step: 1 } as never : undefined,
    context: { windowTokens: 100, estimateTokens: 5 },
  });
}

const record = (fields: Partial<ThreadRecord> = {}): ThreadRecord => ({
  id: "thread_a",
  createdAt: AT,
  updatedAt: AT,
  seq: 0,
  status: "idle",
  queue: [],
  ...fields,
});

const LISTS = ["status", "items", "pending", "queue", "turns", "todos", "viewVersion"];

describe("view snapshot keys", () => {
  test("an untitled thread: no title key, the title state in the spread's order", () => {
    const view = snapshotOf(record());
    assert.deepEqual(Object.keys(view), [
      "threadId",
      "titleStatus",
      "titleGeneration",
      ...LISTS,
      "context",
    ]);
    assert.equal(view.titleStatus, "none");
    assert.equal(view.titleGeneration, 0);
    assert.equal("title" in view, false);
  });

  test("a titled thread: the title after its generation, before the status", () => {
    const view = snapshotOf(
      record({ title: "Hello", titleStatus: "fallback", titleGeneration: 2 }),
    );
    assert.deepEqual(Object.keys(view), [
      "threadId",
      "titleStatus",
      "titleGeneration",
      "title",
      ...LISTS,
      "context",
    ]);
    assert.equal(
      JSON.stringify(view),
      '{"threadId":"thread_a","titleStatus":"fallback","titleGeneration":2,"title":"Hello",' +
        '"status":"idle","items":[],"pending":[],"queue":[],"turns":[],"todos":[],' +
        '"viewVersion":7,"context":{"windowTokens":100,"estimateTokens":5}}',
    );
  });

  test("optional parts follow the version in their own order", () => {
    const view = snapshotOf(
      record({
        title: "Hello",
        titleStatus: "ready",
        titleGeneration: 1,
        parentThreadId: "thread_p",
        forkedFrom: { threadId: "thread_s" },
        status: "running",
        queue: [{ id: "queued_1", requestKey: "k", input: { text: "next" }, queuedAt: AT }],
      }),
      { runProgress: true },
    );
    assert.deepEqual(Object.keys(view), [
      "threadId",
      "titleStatus",
      "titleGeneration",
      "title",
      ...LISTS,
      "parentThreadId",
      "forkedFrom",
      "runProgress",
      "context",
    ]);
    assert.deepEqual(view.queue, [{ id: "queued_1", requestKey: "k", text: "next" }]);
    assert.equal(view.status, "running");
  });
});
