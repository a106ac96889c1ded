// http.md's route table as data: one row per route, shared by the route-table,
// idempotency and body tests of http_contract_*.test.ts.
import assert from "node:assert/strict";
import { type ThreadView } from "@floret/engine";
import { type HttpAction } from "@floret/engine/http";
import { get, json, viewOf } from "./http_contract_support.ts";

/** One row of http.md's table: the request, its action, status, shape and service call. */
export type Row = {
  request: () => Request;
  action: HttpAction;
  threadId?: string;
  status: number;
  body?: (body: Record<string, unknown>) => void;
  call: { method: string; check: (args: unknown[]) => void };
};

/** The Idempotency-Key every row's mutation sends. */
export const K = "key-1";
/** Asserts a response body carries a view with a threadId. */
export const hasView = (body: Record<string, unknown>) =>
  assert.equal((body.view as ThreadView).threadId !== undefined, true);

/** Every route of http.md's table, with what the server must answer and call. */
export const ROWS: Row[] = [
  {
    request: () => json("POST", "/threads", { title: "T" }, K),
    action: "create",
    status: 201,
    body: (b) => {
      assert.equal(b.threadId, "t-new");
      hasView(b);
    },
    call: {
      method: "create",
      check: ([input]) => assert.deepEqual(input, { requestKey: K, title: "T" }),
    },
  },
  {
    request: () => get("/threads?limit=5&cursor=c1"),
    action: "list",
    status: 200,
    body: (b) => assert.deepEqual(b, { threads: [], cursor: "next-page" }),
    call: {
      method: "list",
      check: ([options]) =>
        assert.deepEqual({ ...(options as object) }, { limit: 5, cursor: "c1" }),
    },
  },
  {
    request: () => get("/threads/t1"),
    action: "view",
    threadId: "t1",
    status: 200,
    body: (b) => assert.deepEqual(b, viewOf("t1")),
    call: { method: "view", check: ([id]) => assert.equal(id, "t1") },
  },
  {
    request: () => json("PATCH", "/threads/t1", { title: "New" }, K),
    action: "setTitle",
    threadId: "t1",
    status: 200,
    body: (b) => assert.deepEqual(b, { view: viewOf("t1") }),
    call: {
      method: "setTitle",
      check: ([input]) => assert.deepEqual(input, { threadId: "t1", requestKey: K, title: "New" }),
    },
  },
  {
    request: () => get("/threads/t1", { method: "DELETE", headers: { "idempotency-key": K } }),
    action: "delete",
    threadId: "t1",
    status: 204,
    call: {
      method: "delete",
      check: ([input]) => assert.deepEqual(input, { threadId: "t1", requestKey: K }),
    },
  },
  {
    request: () => get("/threads/t1/history?limit=2&before=item-9"),
    action: "history",
    threadId: "t1",
    status: 200,
    body: (b) => assert.deepEqual(b, { items: [], before: "item-0", hasMore: true }),
    call: {
      method: "history",
      check: ([id, options]) => {
        assert.equal(id, "t1");
        assert.deepEqual({ ...(options as object) }, { limit: 2, before: "item-9" });
      },
    },
  },
  {
    request: () =>
      json("POST", "/threads/t1/messages", {
        input: { text: "hi" },
        supplementalContext: [{ title: "Doc", text: "body" }],
      }, K),
    action: "send",
    threadId: "t1",
    status: 202,
    body: (b) => {
      assert.equal(b.threadId, "t1");
      assert.equal(b.turnId, "turn-1");
      assert.equal(b.queued, false);
      hasView(b);
    },
    call: {
      method: "send",
      check: ([input]) =>
        assert.deepEqual(input, {
          threadId: "t1",
          requestKey: K,
          input: { text: "hi" },
          supplementalContext: [{ title: "Doc", text: "body" }],
        }),
    },
  },
  {
    request: () => json("POST", "/threads/t1/interactions/i1", { decision: "approve" }, K),
    action: "respond",
    threadId: "t1",
    status: 200,
    body: (b) => assert.deepEqual(b, { view: viewOf("t1") }),
    call: {
      method: "respond",
      check: ([input]) =>
        assert.deepEqual(input, {
          threadId: "t1",
          requestKey: K,
          interactionId: "i1",
          decision: "approve",
        }),
    },
  },
  {
    request: () => json("POST", "/threads/t1/cancel", { mode: "graceful" }, K),
    action: "cancel",
    threadId: "t1",
    status: 200,
    body: (b) => assert.deepEqual(b, { view: viewOf("t1") }),
    call: {
      method: "cancel",
      check: ([input]) =>
        assert.deepEqual(input, { threadId: "t1", requestKey: K, mode: "graceful" }),
    },
  },
  {
    request: () => json("POST", "/threads/t1/retry", { turnId: "turn-0" }, K),
    action: "retry",
    threadId: "t1",
    status: 202,
    body: (b) => assert.deepEqual(b, { turnId: "turn-2", view: viewOf("t1") }),
    call: {
      method: "retry",
      check: ([input]) =>
        assert.deepEqual(input, { threadId: "t1", requestKey: K, turnId: "turn-0" }),
    },
  },
  {
    request: () => json("POST", "/threads/t1/fork", { atItemId: "item-3" }, K),
    action: "fork",
    threadId: "t1",
    status: 201,
    body: (b) => assert.deepEqual(b, { threadId: "t-fork", view: viewOf("t-fork") }),
    call: {
      method: "fork",
      check: ([input]) =>
        assert.deepEqual(input, { threadId: "t1", requestKey: K, atItemId: "item-3" }),
    },
  },
  {
    request: () => json("POST", "/threads/t1/queue/q1/promote", {}, K),
    action: "promoteQueued",
    threadId: "t1",
    status: 202,
    body: (b) => assert.deepEqual(b, { turnId: "turn-3", view: viewOf("t1") }),
    call: {
      method: "promoteQueued",
      check: ([input]) => assert.deepEqual(input, { threadId: "t1", requestKey: K, queueId: "q1" }),
    },
  },
  {
    request: () =>
      get("/threads/t1/queue/q1", { method: "DELETE", headers: { "idempotency-key": K } }),
    action: "deleteQueued",
    threadId: "t1",
    status: 200,
    body: (b) => assert.deepEqual(b, { view: viewOf("t1") }),
    call: {
      method: "deleteQueued",
      check: ([input]) => assert.deepEqual(input, { threadId: "t1", requestKey: K, queueId: "q1" }),
    },
  },
  {
    request: () => json("POST", "/threads/t1/compact", {}, K),
    action: "compact",
    threadId: "t1",
    status: 200,
    body: (b) => assert.deepEqual(b, { outcome: "noop", view: viewOf("t1") }),
    call: {
      method: "compact",
      check: ([input]) => assert.deepEqual(input, { threadId: "t1", requestKey: K }),
    },
  },
  {
    request: () => get("/threads/t1/context"),
    action: "context",
    threadId: "t1",
    status: 200,
    body: (b) => assert.equal(b.windowTokens, 1000),
    call: { method: "context", check: ([id]) => assert.equal(id, "t1") },
  },
  {
    request: () => get("/threads/t1/artifacts/a1"),
    action: "artifact",
    threadId: "t1",
    status: 200,
    body: (b) => assert.deepEqual(b, { id: "a1", callId: "call-1", text: "the full output" }),
    call: {
      method: "artifact",
      check: ([id, artifactId]) => assert.deepEqual([id, artifactId], ["t1", "a1"]),
    },
  },
  {
    request: () => get("/threads/t1/idle?timeoutMs=2500"),
    action: "waitForIdle",
    threadId: "t1",
    status: 200,
    body: (b) => assert.deepEqual(b, viewOf("t1")),
    call: {
      method: "waitForIdle",
      check: ([id, options]) => {
        assert.equal(id, "t1");
        assert.equal((options as { timeoutMs?: number }).timeoutMs, 2500);
      },
    },
  },
];
