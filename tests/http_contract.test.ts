// Black-box checks of `@floret/engine/http`, written from http.md and the
// "@floret/engine/http" part of public-api.d.ts only: the route table, the
// error table, authorize, request keys, bodies, basePath, the events stream,
// the chat route and the client's errors and headers.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import {
  defineAgent,
  defineTool,
  type ErrorCode,
  FloretError,
  memoryStore,
  openHost,
  type ThreadService,
  type ThreadUpdate,
  type ThreadView,
} from "@floret/engine";
import { scriptedGateway, type ScriptStep } from "@floret/engine/testing";
import { type HttpAction, threadApi, threadClient } from "@floret/engine/http";

// ------------------------------------------------------------ helpers

type Check = { action: HttpAction; threadId?: string; request: Request };
type Call = { method: string; args: unknown[] };

const allow = (seen: Check[]) => (check: Check) => {
  seen.push(check);
  return true;
};

/** A view with the fields public-api.d.ts lists; the server passes it through untouched. */
const viewOf = (threadId: string, viewVersion = 3): ThreadView => ({
  threadId,
  status: "idle",
  items: [],
  pending: [],
  queue: [],
  turns: [],
  todos: [],
  viewVersion,
} as unknown as ThreadView);

/** One live subscription of the fake: registered when `subscribe()` is called. */
class FakeSubscription {
  readonly queue: (ThreadUpdate | "end")[] = [];
  wake: (() => void) | undefined;
  signal: AbortSignal | undefined;
  push(update: ThreadUpdate | "end"): void {
    this.queue.push(update);
    this.wake?.();
  }
}

/**
 * A ThreadService that records every call and answers with fixed shapes, so a
 * test sees exactly what the server passed in and whether it called at all.
 */
function fakeService(
  overrides: Partial<Record<keyof ThreadService, (...args: never[]) => unknown>> = {},
) {
  const calls: Call[] = [];
  const subscriptions: FakeSubscription[] = [];
  const context = {
    windowTokens: 1000,
    estimateTokens: 10,
    totals: { inputTokens: 1, outputTokens: 2, cacheReadTokens: 0, cacheWriteTokens: 0 },
    compactions: [],
  };
  const base: Record<string, (...args: never[]) => unknown> = {
    create: () => ({ threadId: "t-new", view: viewOf("t-new") }),
    list: () => ({ threads: [], cursor: "next-page" }),
    view: (threadId: string) => viewOf(threadId),
    setTitle: () => ({ view: viewOf("t1") }),
    delete: () => undefined,
    history: () => ({ items: [], before: "item-0", hasMore: true }),
    send: () => ({ threadId: "t1", turnId: "turn-1", queued: false, view: viewOf("t1") }),
    respond: () => ({ view: viewOf("t1") }),
    cancel: () => ({ view: viewOf("t1") }),
    retry: () => ({ turnId: "turn-2", view: viewOf("t1") }),
    fork: () => ({ threadId: "t-fork", view: viewOf("t-fork") }),
    promoteQueued: () => ({ turnId: "turn-3", view: viewOf("t1") }),
    deleteQueued: () => ({ view: viewOf("t1") }),
    compact: () => ({ outcome: "noop", view: viewOf("t1") }),
    context: () => context,
    artifact: () => ({ id: "a1", callId: "call-1", text: "the full output" }),
    waitForIdle: (threadId: string) => viewOf(threadId),
    subscribe: (_threadId: string, options?: { signal?: AbortSignal }) => {
      const subscription = new FakeSubscription();
      subscription.signal = options?.signal;
      subscriptions.push(subscription);
      return (async function* () {
        while (true) {
          const next = subscription.queue.shift();
          if (next === "end") return;
          if (next !== undefined) {
            yield next;
            continue;
          }
          if (subscription.signal?.aborted) return;
          await new Promise<void>((resolve) => {
            subscription.wake = resolve;
            subscription.signal?.addEventListener("abort", () => resolve(), { once: true });
          });
        }
      })();
    },
  };
  const service: Record<string, unknown> = {};
  for (const [name, implementation] of Object.entries({ ...base, ...overrides })) {
    service[name] = (...args: never[]) => {
      calls.push({ method: name, args });
      if (name === "subscribe") return implementation!(...args);
      // Every other method answers with a promise, as the service contract has it; a
      // synchronous throw becomes a rejection.
      try {
        return Promise.resolve(implementation!(...args));
      } catch (error) {
        return Promise.reject(error);
      }
    };
  }
  return { service: service as unknown as ThreadService, calls, subscriptions, context };
}

const errorOf = async (response: Response): Promise<{ code: string; message?: string }> => {
  const body = (await response.json()) as { error: { code: string; message?: string } };
  assert.equal(typeof body.error, "object", "error bodies are {error:{code,…}}");
  return body.error;
};

const json = (
  method: string,
  url: string,
  body: unknown,
  key?: string,
  extra: Record<string, string> = {},
) =>
  new Request(`http://floret.test${url}`, {
    method,
    headers: {
      "content-type": "application/json",
      ...(key === undefined ? {} : { "idempotency-key": key }),
      ...extra,
    },
    body: JSON.stringify(body),
  });

const get = (url: string, init: RequestInit = {}) => new Request(`http://floret.test${url}`, init);

/** Every event of a finished SSE body, in order, comments included as `{comment}`. */
function parseSse(text: string): { event?: string; data?: string; comment?: string }[] {
  const events: { event?: string; data?: string; comment?: string }[] = [];
  for (const block of text.replace(/\r\n/g, "\n").split("\n\n")) {
    if (block.trim() === "") continue;
    const event: { event?: string; data?: string; comment?: string } = {};
    for (const line of block.split("\n")) {
      if (line.startsWith(":")) event.comment = line.slice(1).trim();
      else if (line.startsWith("event:")) event.event = line.slice(6).trim();
      else if (line.startsWith("data:")) {
        const value = line.slice(5).replace(/^ /, "");
        event.data = event.data === undefined ? value : `${event.data}\n${value}`;
      }
    }
    events.push(event);
  }
  return events;
}

async function realEngine(steps: ScriptStep[] = []) {
  const gateway = scriptedGateway(steps);
  const host = await openHost({ store: memoryStore() });
  const threads = host.threads({
    agent: defineAgent({ id: "contract", systemPrompt: "Be brief.", gateway }),
  });
  return { host, threads, gateway };
}

async function rejectsWith(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof FloretError, `expected a FloretError, got ${String(error)}`);
    return error.code;
  }
  assert.fail("expected a rejection");
}

// ------------------------------------------------------------ the route table

/** One row of http.md's table: the request, its action, status, shape and service call. */
type Row = {
  request: () => Request;
  action: HttpAction;
  threadId?: string;
  status: number;
  body?: (body: Record<string, unknown>) => void;
  call: { method: string; check: (args: unknown[]) => void };
};

const K = "key-1";
const hasView = (body: Record<string, unknown>) =>
  assert.equal((body.view as ThreadView).threadId !== undefined, true);

const ROWS: Row[] = [
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

describe("http.md route table", () => {
  for (const row of ROWS) {
    const label = `${row.request().method} ${new URL(row.request().url).pathname}`;
    test(`${label} → ${row.call.method}, ${row.status}, authorize(${row.action})`, async () => {
      const seen: Check[] = [];
      const fake = fakeService();
      const app = threadApi(fake.service, { authorize: allow(seen) });
      const response = await app.fetch(row.request());
      assert.equal(response.status, row.status, await response.clone().text());
      if (row.status === 204) assert.equal(await response.text(), "");
      else {
        assert.match(response.headers.get("content-type") ?? "", /application\/json/);
        row.body!((await response.json()) as Record<string, unknown>);
      }
      assert.equal(seen.length, 1);
      assert.equal(seen[0]!.action, row.action);
      assert.equal(seen[0]!.threadId, row.threadId);
      assert.ok(seen[0]!.request instanceof Request);
      assert.deepEqual(fake.calls.map((call) => call.method), [row.call.method]);
      row.call.check(fake.calls[0]!.args);
    });
  }

  test("authorize(false) on any route answers 403 forbidden and reaches no service method", async () => {
    for (const row of ROWS) {
      const fake = fakeService();
      const app = threadApi(fake.service, { authorize: () => false });
      const response = await app.fetch(row.request());
      assert.equal(response.status, 403, row.call.method);
      assert.equal((await errorOf(response)).code, "forbidden");
      assert.deepEqual(fake.calls, [], row.call.method);
    }
  });

  test("a throwing or rejecting authorize answers 500 and reaches no service method", async () => {
    const throwing = (): boolean => {
      throw new Error("auth backend down");
    };
    const rejecting = () => Promise.reject(new Error("auth backend down"));
    for (const row of ROWS) {
      for (const authorize of [throwing, rejecting]) {
        const fake = fakeService();
        const app = threadApi(fake.service, { authorize });
        const response = await app.fetch(row.request());
        assert.equal(response.status, 500, row.call.method);
        const error = await errorOf(response);
        assert.equal(error.code, "internal");
        assert.doesNotMatch(error.message ?? "", /auth backend down|\n\s+at /);
        assert.deepEqual(fake.calls, [], row.call.method);
      }
    }
  });

  test("events and chat routes also ask authorize with their action and threadId", async () => {
    const seen: Check[] = [];
    const fake = fakeService();
    const app = threadApi(fake.service, { authorize: () => false });
    const spy = threadApi(fake.service, {
      authorize: (check) => {
        seen.push(check);
        return false;
      },
    });
    const events = await spy.fetch(get("/threads/t9/events"));
    assert.equal(events.status, 403);
    const chat = await spy.fetch(json("POST", "/threads/t9/chat", chatBody("m1", ["hi"]), K));
    assert.equal(chat.status, 403);
    assert.equal((await errorOf(chat)).code, "forbidden");
    assert.deepEqual(seen.map((check) => [check.action, check.threadId]), [["subscribe", "t9"], [
      "chat",
      "t9",
    ]]);
    assert.equal((await app.fetch(get("/threads/t9/events"))).status, 403);
    assert.deepEqual(fake.calls, []);
  });

  test("create and list carry no threadId to authorize", async () => {
    const seen: Check[] = [];
    const app = threadApi(fakeService().service, { authorize: allow(seen) });
    await app.fetch(json("POST", "/threads", {}, K));
    await app.fetch(get("/threads"));
    assert.deepEqual(seen.map((check) => check.action), ["create", "list"]);
    for (const check of seen) {
      assert.equal("threadId" in check && check.threadId !== undefined, false);
    }
  });

  test("a missing authorize throws invalid_input when the app is built", () => {
    const fake = fakeService();
    assert.throws(
      () => threadApi(fake.service, {} as never),
      (error: unknown) => error instanceof FloretError && error.code === "invalid_input",
    );
  });
});

describe("unknown routes and basePath", () => {
  for (
    const request of [
      () => get("/nothing-here"),
      () => get("/threads/t1/bogus"),
      () => json("PUT", "/threads/t1", { title: "x" }, K),
      () => get("/threads/t1/queue/q1/promote"),
    ]
  ) {
    test(`${request().method} ${new URL(request().url).pathname} → 404 not_found before authorize`, async () => {
      const seen: Check[] = [];
      const fake = fakeService();
      const response = await threadApi(fake.service, { authorize: allow(seen) }).fetch(request());
      assert.equal(response.status, 404);
      assert.equal((await errorOf(response)).code, "not_found");
      assert.deepEqual(seen, []);
      assert.deepEqual(fake.calls, []);
    });
  }

  test("basePath prefixes every route; the bare path is then unknown; the client's baseUrl includes it", async () => {
    const seen: Check[] = [];
    const fake = fakeService();
    const app = threadApi(fake.service, { authorize: allow(seen), basePath: "/api/v1" });
    const listed = await app.fetch(get("/api/v1/threads"));
    assert.equal(listed.status, 200);
    const viewed = await app.fetch(get("/api/v1/threads/t1"));
    assert.deepEqual(await viewed.json(), viewOf("t1"));
    const bare = await app.fetch(get("/threads"));
    assert.equal(bare.status, 404);
    assert.equal((await errorOf(bare)).code, "not_found");
    assert.deepEqual(seen.map((check) => check.action), ["list", "view"]);

    const client = threadClient({ baseUrl: "http://floret.test/api/v1", fetch: app.fetch });
    assert.deepEqual(await client.view("t1"), viewOf("t1"));
    const wrong = threadClient({ baseUrl: "http://floret.test", fetch: app.fetch });
    assert.equal(await rejectsWith(wrong.view("t1")), "not_found");
  });
});

// ------------------------------------------------------------ the error table

const STATUS_OF: [ErrorCode, number][] = [
  ["invalid_input", 400],
  ["thread_not_found", 404],
  ["interaction_not_found", 404],
  ["timeout", 408],
  ["request_conflict", 409],
  ["thread_busy", 409],
  ["no_retry_target", 409],
  ["execution_deferred", 425],
  ["store_too_new", 500],
  ["host_closed", 503],
  ["storage_failure", 503],
];

describe("http.md error table", () => {
  for (const [code, status] of STATUS_OF) {
    test(`${code} → ${status}, message free of prompt text, keys and stacks; the client rethrows the code`, async () => {
      const secret = "SECRET-PROMPT-TEXT";
      const fake = fakeService({
        send: () => {
          throw new FloretError(code, `Failed on ${secret} under key-77`);
        },
      });
      const app = threadApi(fake.service, { authorize: () => true });
      const response = await app.fetch(
        json("POST", "/threads/t1/messages", { input: { text: secret } }, "key-77"),
      );
      assert.equal(response.status, status);
      const error = await errorOf(response);
      assert.equal(error.code, code);
      assert.equal(typeof error.message, "string");
      assert.doesNotMatch(error.message!, /SECRET-PROMPT-TEXT|key-77|\n\s+at /);

      const client = threadClient({ baseUrl: "http://floret.test", fetch: app.fetch });
      const thrown = await rejectsWith(
        client.send({ threadId: "t1", requestKey: "key-77", input: { text: "x" } }),
      );
      assert.equal(thrown, code);
    });
  }

  test("any other failure is 500 internal without the thrown message or stack", async () => {
    const fake = fakeService({
      view: () => {
        throw new TypeError("cannot read SECRET of undefined");
      },
    });
    const app = threadApi(fake.service, { authorize: () => true });
    const response = await app.fetch(get("/threads/t1"));
    assert.equal(response.status, 500);
    const error = await errorOf(response);
    assert.equal(error.code, "internal");
    assert.doesNotMatch(error.message ?? "", /SECRET|\n\s+at /);
    const client = threadClient({ baseUrl: "http://floret.test", fetch: app.fetch });
    assert.equal(await rejectsWith(client.view("t1")), "internal");
  });

  test("/idle answers 408 timeout when waitForIdle times out", async () => {
    const fake = fakeService({
      waitForIdle: () => {
        throw new FloretError("timeout", "Timed out");
      },
    });
    const response = await threadApi(fake.service, { authorize: () => true }).fetch(
      get("/threads/t1/idle?timeoutMs=1"),
    );
    assert.equal(response.status, 408);
    assert.equal((await errorOf(response)).code, "timeout");
  });
});

// ------------------------------------------------------------ request keys and bodies

describe("Idempotency-Key", () => {
  test("same key and body returns the same result; a different body under it answers 409", async () => {
    const { host, threads } = await realEngine([{ text: "one" }]);
    try {
      const app = threadApi(threads, { authorize: () => true });
      const first = await app.fetch(json("POST", "/threads", { title: "A" }, "create-1"));
      const again = await app.fetch(json("POST", "/threads", { title: "A" }, "create-1"));
      assert.equal(first.status, 201);
      assert.equal(again.status, 201);
      const a = (await first.json()) as { threadId: string };
      const b = (await again.json()) as { threadId: string };
      assert.equal(a.threadId, b.threadId);
      const conflict = await app.fetch(json("POST", "/threads", { title: "B" }, "create-1"));
      assert.equal(conflict.status, 409);
      assert.equal((await errorOf(conflict)).code, "request_conflict");
      assert.equal((await threads.list()).threads.length, 1);

      const send = () =>
        json("POST", `/threads/${a.threadId}/messages`, { input: { text: "hello" } }, "send-1");
      const sent = (await (await app.fetch(send())).json()) as { turnId: string };
      const resent = (await (await app.fetch(send())).json()) as { turnId: string };
      assert.equal(resent.turnId, sent.turnId);
      const other = await app.fetch(
        json("POST", `/threads/${a.threadId}/messages`, { input: { text: "bye" } }, "send-1"),
      );
      assert.equal(other.status, 409);
      assert.equal((await errorOf(other)).code, "request_conflict");
      const view = await threads.waitForIdle(a.threadId);
      assert.equal(view.items.filter((item) => item.kind === "user").length, 1);
      assert.equal(view.turns.length, 1);

      const deleted = await app.fetch(
        get(`/threads/${a.threadId}`, {
          method: "DELETE",
          headers: { "idempotency-key": "del-1" },
        }),
      );
      assert.equal(deleted.status, 204);
      const redeleted = await app.fetch(
        get(`/threads/${a.threadId}`, {
          method: "DELETE",
          headers: { "idempotency-key": "del-1" },
        }),
      );
      assert.equal(redeleted.status, 204);
    } finally {
      await host.shutdown();
    }
  });

  test("a missing, empty or over-long key answers 400 invalid_input and writes nothing; 256 characters pass", async () => {
    const { host, threads } = await realEngine();
    try {
      const app = threadApi(threads, { authorize: () => true });
      for (const key of [undefined, "", "   ", "k".repeat(257)]) {
        const response = await app.fetch(json("POST", "/threads", { title: "A" }, key));
        assert.equal(response.status, 400, `key ${JSON.stringify(key?.slice(0, 10))}`);
        assert.equal((await errorOf(response)).code, "invalid_input");
      }
      assert.deepEqual((await threads.list()).threads, []);
      const longest = await app.fetch(json("POST", "/threads", { title: "A" }, "k".repeat(256)));
      assert.equal(longest.status, 201);
      const padded = await app.fetch(json("POST", "/threads", { title: "A" }, "k".repeat(256)));
      assert.equal(
        ((await padded.json()) as { threadId: string }).threadId,
        ((await longest.json()) as { threadId: string }).threadId,
      );
    } finally {
      await host.shutdown();
    }
  });

  test("every mutation route refuses a missing key before the service", async () => {
    const fake = fakeService();
    const app = threadApi(fake.service, { authorize: () => true });
    for (const row of ROWS) {
      const request = row.request();
      if (request.method === "GET") continue;
      const headers = new Headers(request.headers);
      headers.delete("idempotency-key");
      const bare = new Request(request.url, {
        method: request.method,
        headers,
        body: await request.text() || undefined,
      });
      const response = await app.fetch(bare);
      assert.equal(response.status, 400, row.call.method);
      assert.equal((await errorOf(response)).code, "invalid_input");
    }
    assert.deepEqual(fake.calls, []);
  });
});

describe("bodies", () => {
  const refused = async (
    app: { fetch: (r: Request) => Response | Promise<Response> },
    request: Request,
  ) => {
    const response = await app.fetch(request);
    assert.ok(response.status === 400 || response.status === 415, `status ${response.status}`);
    assert.equal((await errorOf(response)).code, "invalid_input");
  };

  test("unknown fields, bad JSON, wrong types, wrong content type and over 25 MiB answer 400 and write nothing", async () => {
    const { host, threads } = await realEngine();
    try {
      const app = threadApi(threads, { authorize: () => true });
      await refused(app, json("POST", "/threads", { title: "A", owner: "me" }, "b-1"));
      await refused(app, json("POST", "/threads", { title: 42 }, "b-2"));
      await refused(
        app,
        new Request("http://floret.test/threads", {
          method: "POST",
          headers: { "content-type": "application/json", "idempotency-key": "b-3" },
          body: "{not json",
        }),
      );
      await refused(
        app,
        new Request("http://floret.test/threads", {
          method: "POST",
          headers: { "content-type": "text/plain", "idempotency-key": "b-4" },
          body: JSON.stringify({ title: "A" }),
        }),
      );
      await refused(
        app,
        json("POST", "/threads", { title: "x".repeat(25 * 1024 * 1024 + 16) }, "b-5"),
      );
      assert.deepEqual((await threads.list()).threads, []);

      const { threadId } = await threads.create({ requestKey: "c" });
      await refused(
        app,
        json(
          "POST",
          `/threads/${threadId}/messages`,
          { input: { text: "hi" }, extra: true },
          "b-6",
        ),
      );
      await refused(
        app,
        json("POST", `/threads/${threadId}/messages`, { input: { text: "hi", extra: 1 } }, "b-7"),
      );
      await refused(app, json("POST", `/threads/${threadId}/messages`, { text: "hi" }, "b-8"));
      await refused(app, json("PATCH", `/threads/${threadId}`, {}, "b-9"));
      await refused(app, json("POST", `/threads/${threadId}/cancel`, { mode: "soon" }, "b-10"));
      const view = await threads.view(threadId);
      assert.deepEqual(view.items, []);
      assert.equal(view.title, undefined);
    } finally {
      await host.shutdown();
    }
  });

  test("a bad body reaches no service method on any body-taking route", async () => {
    const fake = fakeService();
    const app = threadApi(fake.service, { authorize: () => true });
    for (const row of ROWS) {
      const request = row.request();
      if (request.method === "GET" || request.method === "DELETE") continue;
      await refused(app, json(request.method, new URL(request.url).pathname, { unexpected: 1 }, K));
    }
    assert.deepEqual(fake.calls, []);
  });
});

// ------------------------------------------------------------ events (SSE)

describe("events route", () => {
  test("subscribes before reading the view: view first, then batches above viewVersion in order, resync ends it", async () => {
    const batch = (version: number): ThreadUpdate => ({
      type: "batch",
      baseVersion: version - 1,
      version,
      ops: [],
    });
    const fake = fakeService({
      view: (threadId: string) => {
        // An update that lands between subscribe and view must not be lost.
        for (const subscription of fakeSubscriptions()) subscription.push(batch(4));
        return viewOf(threadId, 3);
      },
    });
    const fakeSubscriptions = () => fake.subscriptions;
    const app = threadApi(fake.service, { authorize: () => true });
    const response = await app.fetch(get("/threads/t1/events"));
    assert.equal(response.status, 200);
    assert.match(response.headers.get("content-type") ?? "", /text\/event-stream/);
    assert.equal(fake.subscriptions.length, 1);
    const subscription = fake.subscriptions[0]!;
    for (const version of [2, 3, 5, 6]) subscription.push(batch(version));
    subscription.push({ type: "resync", reason: "behind" });
    const events = parseSse(await response.text()).filter((event) => event.comment === undefined);
    assert.deepEqual(events.map((event) => event.event), [
      "view",
      "batch",
      "batch",
      "batch",
      "resync",
    ]);
    assert.deepEqual(JSON.parse(events[0]!.data!), viewOf("t1", 3));
    assert.deepEqual(events.slice(1, 4).map((event) => JSON.parse(event.data!)), [
      batch(4),
      batch(5),
      batch(6),
    ]);
    assert.equal(JSON.parse(events[4]!.data!).type, "resync");
    assert.deepEqual(
      fake.calls.map((call) => call.method),
      ["subscribe", "view"],
    );
  });

  test("an idle stream carries `: ping` comment lines (interval shortened through pingIntervalMs)", async () => {
    // http.md's 15 s default is the option's default; waiting it out would make a slow test, so the
    // interval is shortened and the test waits for pings, not for a time.
    const fake = fakeService();
    const controller = new AbortController();
    const app = threadApi(fake.service, { authorize: () => true, pingIntervalMs: 5 });
    const response = await app.fetch(get("/threads/t1/events", { signal: controller.signal }));
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let text = "";
    while ((text.match(/^: ping$/gm) ?? []).length < 2) {
      const { value, done } = await reader.read();
      assert.equal(done, false, "the stream stays open while idle");
      text += decoder.decode(value, { stream: true });
    }
    fake.subscriptions[0]!.push({ type: "batch", baseVersion: 3, version: 4, ops: [] });
    while (!text.includes("event: batch")) {
      const { value, done } = await reader.read();
      assert.equal(done, false);
      text += decoder.decode(value, { stream: true });
    }
    const events = parseSse(text);
    assert.equal(events[0]!.event, "view");
    assert.deepEqual(
      events.filter((event) => event.event !== undefined).map((event) => event.event),
      ["view", "batch"],
    );
    controller.abort();
    await reader.cancel();
  });

  test("closing the request aborts the subscription", async () => {
    const fake = fakeService();
    const app = threadApi(fake.service, { authorize: () => true });
    const controller = new AbortController();
    const response = await app.fetch(get("/threads/t1/events", { signal: controller.signal }));
    const reader = response.body!.getReader();
    await reader.read();
    controller.abort();
    await reader.cancel();
    const subscription = fake.subscriptions[0]!;
    for (let i = 0; i < 200 && subscription.signal?.aborted !== true; i++) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    assert.equal(subscription.signal?.aborted, true);
  });

  test("an unknown thread answers 404 thread_not_found as JSON", async () => {
    const { host, threads } = await realEngine();
    try {
      const response = await threadApi(threads, { authorize: () => true }).fetch(
        get("/threads/missing/events"),
      );
      assert.equal(response.status, 404);
      assert.equal((await errorOf(response)).code, "thread_not_found");
    } finally {
      await host.shutdown();
    }
  });

  test("the client skips the view event and pings, yields batch and resync as sent, and reconnects after resync", async () => {
    const sse = (...lines: string[]) =>
      new Response(lines.join("\n"), { headers: { "content-type": "text/event-stream" } });
    const batch = (version: number) => ({
      type: "batch",
      baseVersion: version - 1,
      version,
      ops: [],
    });
    const responses = [
      sse(
        ": ping",
        "",
        "event: view",
        `data: ${JSON.stringify(viewOf("t1", 3))}`,
        "",
        ": ping",
        "",
        "event: batch",
        `data: ${JSON.stringify(batch(4))}`,
        "",
        ": ping",
        "",
        "event: resync",
        `data: ${JSON.stringify({ type: "resync", reason: "behind" })}`,
        "",
        "",
      ),
      sse(
        "event: view",
        `data: ${JSON.stringify(viewOf("t1", 9))}`,
        "",
        "event: batch",
        `data: ${JSON.stringify(batch(10))}`,
        "",
        "",
      ),
    ];
    const paths: string[] = [];
    const client = threadClient({
      baseUrl: "http://floret.test",
      fetch: (request) => {
        paths.push(new URL(request.url).pathname);
        const next = responses.shift();
        return next ?? new Promise<Response>(() => {});
      },
    });
    const seen: unknown[] = [];
    for await (const update of client.subscribe("t1")) {
      seen.push(update);
      if (seen.length === 3) break;
    }
    assert.deepEqual(seen, [batch(4), { type: "resync", reason: "behind" }, batch(10)]);
    assert.deepEqual(paths, ["/threads/t1/events", "/threads/t1/events"]);
  });

  test("a client subscription over a real host sees the turn's batches; aborting ends its loop quietly", async () => {
    const { host, threads } = await realEngine([{ text: "streamed answer" }]);
    try {
      const client = threadClient({
        baseUrl: "http://floret.test",
        fetch: threadApi(threads, { authorize: () => true }).fetch,
      });
      const { threadId } = await client.create({ requestKey: "c-1" });
      const before = await client.view(threadId);
      const controller = new AbortController();
      const versions: number[] = [];
      const loop = (async () => {
        for await (const update of client.subscribe(threadId, { signal: controller.signal })) {
          if (update.type === "batch") versions.push(update.version);
        }
      })();
      // The client registers when the events response arrives; wait until it has.
      for (let i = 0; i < 50; i++) await new Promise((resolve) => setTimeout(resolve, 5));
      await client.send({ threadId, requestKey: "s-1", input: { text: "go" } });
      const after = await client.waitForIdle(threadId);
      for (let i = 0; i < 400 && versions.at(-1) !== after.viewVersion; i++) {
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      assert.ok(versions.length > 0);
      assert.deepEqual([...versions].sort((a, b) => a - b), versions, "batches come in order");
      assert.ok(versions[0]! > before.viewVersion);
      assert.equal(versions.at(-1), after.viewVersion);
      controller.abort();
      await loop;
    } finally {
      await host.shutdown();
    }
  });
});

// ------------------------------------------------------------ chat route

function chatBody(lastId: string, parts: string[], extra: Record<string, unknown> = {}) {
  return {
    id: "chat-1",
    trigger: "submit-message",
    messageId: undefined,
    messages: [
      { id: "u0", role: "user", parts: [{ type: "text", text: "earlier" }] },
      { id: "a0", role: "assistant", parts: [{ type: "text", text: "earlier answer" }] },
      {
        id: lastId,
        role: "user",
        parts: [...parts.map((text) => ({ type: "text", text })), {
          type: "file",
          mediaType: "text/plain",
          url: "data:,",
        }],
      },
    ],
    ...extra,
  };
}

describe("chat route", () => {
  test("answers the AI SDK UI message stream; the last user message's text parts become the input", async () => {
    const { host, threads, gateway } = await realEngine([{
      text: "Hello there",
      reasoning: "thinking hard",
    }]);
    try {
      const seen: Check[] = [];
      const app = threadApi(threads, { authorize: allow(seen) });
      const { threadId } = await threads.create({ requestKey: "c" });
      const response = await app.fetch(
        json(
          "POST",
          `/threads/${threadId}/chat`,
          chatBody("m-1", ["line one", "line two"], { customField: { a: 1 } }),
        ),
      );
      assert.equal(response.status, 200, await response.clone().text());
      assert.equal(response.headers.get("x-vercel-ai-ui-message-stream"), "v1");
      assert.match(response.headers.get("content-type") ?? "", /text\/event-stream/);
      const data = parseSse(await response.text()).filter((event) => event.data !== undefined).map((
        event,
      ) => event.data!);
      assert.equal(data.at(-1), "[DONE]");
      const chunks = data.slice(0, -1).map((line) =>
        JSON.parse(line) as { type: string; delta?: string }
      );
      const types = chunks.map((chunk) => chunk.type);
      assert.equal(types[0], "start");
      assert.equal(types.at(-1), "finish");
      assert.ok(types.indexOf("text-start") < types.indexOf("text-delta"));
      assert.ok(types.lastIndexOf("text-delta") < types.indexOf("text-end"));
      assert.ok(types.some((type) => type.startsWith("reasoning-")), types.join());
      assert.equal(
        chunks.filter((c) => c.type === "text-delta").map((c) => c.delta).join(""),
        "Hello there",
      );
      assert.deepEqual(seen.map((check) => [check.action, check.threadId]), [["chat", threadId]]);

      const view = await threads.waitForIdle(threadId);
      const users = view.items.filter((item) => item.kind === "user");
      assert.deepEqual(users.map((item) => item.text), ["line one\nline two"]);

      // The same message id again replays the committed turn: no new turn, no new provider call.
      const replay = await app.fetch(
        json("POST", `/threads/${threadId}/chat`, chatBody("m-1", ["line one", "line two"])),
      );
      assert.equal(replay.status, 200);
      const replayData = parseSse(await replay.text()).filter((e) => e.data !== undefined).map((
        e,
      ) => e.data!);
      assert.equal(replayData.at(-1), "[DONE]");
      const replayText = replayData.slice(0, -1).map((line) =>
        JSON.parse(line) as { type: string; delta?: string }
      )
        .filter((chunk) => chunk.type === "text-delta").map((chunk) => chunk.delta).join("");
      assert.equal(replayText, "Hello there");
      const later = await threads.waitForIdle(threadId);
      assert.equal(later.turns.length, 1);
      assert.equal(gateway.requests.length, 1);

      // The message id is the request key: /messages under it with the same text is the same request.
      const same = await app.fetch(
        json(
          "POST",
          `/threads/${threadId}/messages`,
          { input: { text: "line one\nline two" } },
          "m-1",
        ),
      );
      assert.equal(same.status, 202);
      assert.equal(((await same.json()) as { turnId: string }).turnId, later.turns[0]!.turnId);
    } finally {
      await host.shutdown();
    }
  });

  test("an Idempotency-Key header wins over the message id", async () => {
    const { host, threads } = await realEngine([{ text: "first" }, { text: "second" }]);
    try {
      const app = threadApi(threads, { authorize: () => true });
      const { threadId } = await threads.create({ requestKey: "c" });
      const one = await app.fetch(
        json("POST", `/threads/${threadId}/chat`, chatBody("m-1", ["hi"]), "chat-key-1"),
      );
      await one.text();
      const two = await app.fetch(
        json("POST", `/threads/${threadId}/chat`, chatBody("m-1", ["hi"]), "chat-key-2"),
      );
      await two.text();
      const view = await threads.waitForIdle(threadId);
      assert.equal(view.turns.length, 2);
      const conflict = await threads.send({
        threadId,
        requestKey: "chat-key-1",
        input: { text: "other" },
      }).then(
        () => "ok",
        (error: FloretError) => error.code,
      );
      assert.equal(conflict, "request_conflict");
    } finally {
      await host.shutdown();
    }
  });

  test("the same message id with other text answers 409; a bad key or an over-limit body answers 400", async () => {
    const { host, threads } = await realEngine([{ text: "one" }]);
    try {
      const app = threadApi(threads, { authorize: () => true });
      const { threadId } = await threads.create({ requestKey: "c" });
      await (await app.fetch(json("POST", `/threads/${threadId}/chat`, chatBody("m-1", ["hi"]))))
        .text();
      const conflict = await app.fetch(
        json("POST", `/threads/${threadId}/chat`, chatBody("m-1", ["bye"])),
      );
      assert.equal(conflict.status, 409);
      assert.equal((await errorOf(conflict)).code, "request_conflict");
      const badKey = await app.fetch(
        json("POST", `/threads/${threadId}/chat`, chatBody("m-2", ["x"]), "K".repeat(257)),
      );
      assert.equal(badKey.status, 400);
      assert.equal((await errorOf(badKey)).code, "invalid_input");
      const big = await app.fetch(
        json(
          "POST",
          `/threads/${threadId}/chat`,
          chatBody("m-3", ["x".repeat(25 * 1024 * 1024 + 16)]),
        ),
      );
      assert.equal(big.status, 400);
      assert.equal((await errorOf(big)).code, "invalid_input");
      const view = await threads.waitForIdle(threadId);
      assert.equal(view.turns.length, 1);
      assert.deepEqual(view.items.filter((item) => item.kind === "user").map((item) => item.text), [
        "hi",
      ]);
    } finally {
      await host.shutdown();
    }
  });

  test("an unknown thread answers 404 thread_not_found", async () => {
    const { host, threads } = await realEngine();
    try {
      const response = await threadApi(threads, { authorize: () => true })
        .fetch(json("POST", "/threads/missing/chat", chatBody("m-1", ["hi"])));
      assert.equal(response.status, 404);
      assert.equal((await errorOf(response)).code, "thread_not_found");
    } finally {
      await host.shutdown();
    }
  });
});

// ------------------------------------------------------------ client

describe("threadClient", () => {
  test("errors surface as FloretError with the same code as in-process", async () => {
    const { host, threads } = await realEngine([{ hang: true }]);
    try {
      const client = threadClient({
        baseUrl: "http://floret.test",
        fetch: threadApi(threads, { authorize: () => true }).fetch,
      });
      const { threadId } = await threads.create({ requestKey: "c-0", title: "A" });
      const cases: [string, (service: ThreadService) => Promise<unknown>][] = [
        ["view of a missing thread", (s) => s.view("missing")],
        [
          "send to a missing thread",
          (s) => s.send({ threadId: "missing", requestKey: "x", input: { text: "hi" } }),
        ],
        ["create with an empty key", (s) => s.create({ requestKey: "" })],
        ["create, same key, other title", (s) => s.create({ requestKey: "c-0", title: "B" })],
        ["retry with nothing to retry", (s) => s.retry({ threadId, requestKey: "r-0" })],
        [
          "respond to a missing interaction",
          (s) =>
            s.respond({ threadId, requestKey: "i-0", interactionId: "nope", decision: "approve" }),
        ],
        ["history of a missing thread", (s) => s.history("missing")],
      ];
      for (const [label, run] of cases) {
        const local = await rejectsWith(run(threads));
        const remote = await rejectsWith(run(client));
        assert.equal(remote, local, label);
      }
      await client.send({ threadId, requestKey: "s-0", input: { text: "hang" } });
      const local = await rejectsWith(threads.waitForIdle(threadId, { timeoutMs: 20 }));
      const remote = await rejectsWith(client.waitForIdle(threadId, { timeoutMs: 20 }));
      assert.equal(local, "timeout");
      assert.equal(remote, "timeout");
      await client.cancel({ threadId, requestKey: "x-0" });
      const idle = await client.waitForIdle(threadId);
      assert.notEqual(idle.status, "running");
    } finally {
      await host.shutdown();
    }
  });

  test("a subscribe whose signal is already aborted ends at once, in-process and over HTTP alike", async () => {
    const { host, threads } = await realEngine();
    try {
      const client = threadClient({
        baseUrl: "http://floret.test",
        fetch: threadApi(threads, { authorize: () => true }).fetch,
      });
      const { threadId } = await threads.create({ requestKey: "c-0" });
      const aborted = AbortSignal.abort();
      for (const service of [threads, client]) {
        const seen: ThreadUpdate[] = [];
        for await (const update of service.subscribe(threadId, { signal: aborted })) {
          seen.push(update);
        }
        assert.deepEqual(seen, []);
      }
    } finally {
      await host.shutdown();
    }
  });

  test("a refused request surfaces as forbidden", async () => {
    const client = threadClient({
      baseUrl: "http://floret.test",
      fetch: threadApi(fakeService().service, { authorize: () => false }).fetch,
    });
    assert.equal(await rejectsWith(client.list()), "forbidden");
  });

  test("mutations send their requestKey as Idempotency-Key", async () => {
    const keys: (string | null)[] = [];
    const fake = fakeService();
    const client = threadClient({
      baseUrl: "http://floret.test",
      fetch: threadApi(fake.service, {
        authorize: ({ request }) => {
          keys.push(request.headers.get("idempotency-key"));
          return true;
        },
      }).fetch,
    });
    await client.create({ requestKey: "k-create", title: "T" });
    await client.setTitle({ threadId: "t1", requestKey: "k-title", title: "U" });
    await client.delete({ threadId: "t1", requestKey: "k-delete" });
    await client.compact({ threadId: "t1", requestKey: "k-compact" });
    assert.deepEqual(keys, ["k-create", "k-title", "k-delete", "k-compact"]);
    assert.deepEqual(
      fake.calls.map((call) => (call.args[0] as { requestKey: string }).requestKey),
      keys,
    );
  });

  test("headers, as an object or a function, go with every request", async () => {
    for (
      const headers of [
        { authorization: "Bearer token-1" },
        () => ({ authorization: "Bearer token-1" }),
        () => Promise.resolve({ authorization: "Bearer token-1" }),
      ]
    ) {
      const tokens: (string | null)[] = [];
      const app = threadApi(fakeService().service, {
        authorize: ({ request }) => {
          tokens.push(request.headers.get("authorization"));
          return request.headers.get("authorization") === "Bearer token-1";
        },
      });
      const client = threadClient({ baseUrl: "http://floret.test", fetch: app.fetch, headers });
      await client.list();
      await client.view("t1");
      await client.send({ threadId: "t1", requestKey: "s", input: { text: "hi" } });
      assert.deepEqual(tokens, ["Bearer token-1", "Bearer token-1", "Bearer token-1"]);
    }
  });

  test("a function for headers is asked again for each request", async () => {
    let n = 0;
    const tokens: (string | null)[] = [];
    const app = threadApi(fakeService().service, {
      authorize: ({ request }) => {
        tokens.push(request.headers.get("authorization"));
        return true;
      },
    });
    const client = threadClient({
      baseUrl: "http://floret.test",
      fetch: app.fetch,
      headers: () => ({ authorization: `t${++n}` }),
    });
    await client.view("t1");
    await client.view("t1");
    assert.deepEqual(tokens, ["t1", "t2"]);
  });

  test("the client passes list, history and context through", async () => {
    const fake = fakeService();
    const client = threadClient({
      baseUrl: "http://floret.test",
      fetch: threadApi(fake.service, { authorize: () => true }).fetch,
    });
    assert.deepEqual(await client.list({ limit: 3, cursor: "c" }), {
      threads: [],
      cursor: "next-page",
    });
    assert.deepEqual(await client.history("t1", { limit: 2, before: "i" }), {
      items: [],
      before: "item-0",
      hasMore: true,
    });
    assert.deepEqual(await client.context("t1"), fake.context);
    assert.equal(await client.delete({ threadId: "t1", requestKey: "d" }), undefined);
  });
});

// ------------------------------------------------------------ finer points

describe("finer points of http.md", () => {
  test("authorize runs before key and body checks: a refused request answers 403 even when malformed", async () => {
    const fake = fakeService();
    const app = threadApi(fake.service, { authorize: () => false });
    const noKey = await app.fetch(new Request("http://floret.test/threads", { method: "POST" }));
    assert.equal(noKey.status, 403);
    assert.equal((await errorOf(noKey)).code, "forbidden");
    const badBody = await app.fetch(
      new Request("http://floret.test/threads/t1/messages", {
        method: "POST",
        headers: { "content-type": "text/plain", "idempotency-key": K },
        body: "zz",
      }),
    );
    assert.equal(badBody.status, 403);
    assert.deepEqual(fake.calls, []);
  });

  test("JSON with a charset parameter is JSON; routes whose fields are all optional take no body", async () => {
    const fake = fakeService();
    const app = threadApi(fake.service, { authorize: () => true });
    const charset = await app.fetch(
      json("POST", "/threads", { title: "T" }, K, {
        "content-type": "application/json; charset=utf-8",
      }),
    );
    assert.equal(charset.status, 201);
    for (
      const [path, status] of [["/threads", 201], ["/threads/t1/compact", 200], [
        "/threads/t1/cancel",
        200,
      ]] as const
    ) {
      const response = await app.fetch(
        new Request(`http://floret.test${path}`, {
          method: "POST",
          headers: { "idempotency-key": K },
        }),
      );
      assert.equal(response.status, status, path);
    }
    assert.deepEqual(fake.calls.map((call) => call.method), [
      "create",
      "create",
      "compact",
      "cancel",
    ]);
  });

  test("bad query values answer 400 invalid_input before the service", async () => {
    const fake = fakeService();
    const app = threadApi(fake.service, { authorize: () => true });
    for (
      const url of [
        "/threads?limit=abc",
        "/threads/t1/history?limit=abc",
        "/threads/t1/idle?timeoutMs=abc",
      ]
    ) {
      const response = await app.fetch(get(url));
      assert.equal(response.status, 400, url);
      assert.equal((await errorOf(response)).code, "invalid_input");
    }
    assert.deepEqual(fake.calls, []);
  });

  test("an over-long key is refused without echoing it", async () => {
    const app = threadApi(fakeService().service, { authorize: () => true });
    const key = "Q".repeat(300);
    const response = await app.fetch(json("POST", "/threads", {}, key));
    assert.equal(response.status, 400);
    assert.doesNotMatch((await errorOf(response)).message ?? "", /QQQQ/);
  });

  test("a non-object JSON body is a bad body", async () => {
    const fake = fakeService();
    const app = threadApi(fake.service, { authorize: () => true });
    for (const body of [[], null, "text", 3]) {
      const response = await app.fetch(json("POST", "/threads", body, K));
      assert.equal(response.status, 400, JSON.stringify(body));
      assert.equal((await errorOf(response)).code, "invalid_input");
    }
    assert.deepEqual(fake.calls, []);
  });

  test("the client reports an answer it cannot read, or no answer, as internal", async () => {
    const answers: (() => Response | Promise<Response>)[] = [
      () =>
        new Response("<html>bad gateway</html>", {
          status: 502,
          headers: { "content-type": "text/html" },
        }),
      () =>
        new Response("{not json", { status: 200, headers: { "content-type": "application/json" } }),
      () => Promise.reject(new TypeError("fetch failed")),
    ];
    for (const answer of answers) {
      const client = threadClient({ baseUrl: "http://floret.test", fetch: answer });
      assert.equal(await rejectsWith(client.view("t1")), "internal");
    }
  });

  test("chat streams tool calls as tool-input-available and tool-output-available", async () => {
    const add = defineTool({
      name: "add",
      description: "Add two numbers",
      input: z.object({ a: z.number(), b: z.number() }),
      execute: ({ a, b }) => String(a + b),
    });
    const gateway = scriptedGateway([
      { toolCalls: [{ name: "add", arguments: { a: 1, b: 2 }, callId: "call-9" }] },
      { text: "It is 3" },
    ]);
    const host = await openHost({ store: memoryStore() });
    try {
      const threads = host.threads({
        agent: defineAgent({ id: "adder", systemPrompt: "Add.", gateway, tools: [add] }),
      });
      const { threadId } = await threads.create({ requestKey: "c" });
      const app = threadApi(threads, { authorize: () => true });
      const response = await app.fetch(
        json("POST", `/threads/${threadId}/chat`, chatBody("m-1", ["add 1 and 2"])),
      );
      assert.equal(response.status, 200);
      const data = parseSse(await response.text()).filter((e) => e.data !== undefined).map((e) =>
        e.data!
      );
      assert.equal(data.at(-1), "[DONE]");
      const chunks = data.slice(0, -1).map((line) => JSON.parse(line) as Record<string, unknown>);
      const input = chunks.find((chunk) => chunk.type === "tool-input-available");
      const output = chunks.find((chunk) => chunk.type === "tool-output-available");
      assert.deepEqual(
        { toolCallId: input?.toolCallId, toolName: input?.toolName, input: input?.input },
        { toolCallId: "call-9", toolName: "add", input: { a: 1, b: 2 } },
      );
      assert.deepEqual({ toolCallId: output?.toolCallId, output: output?.output }, {
        toolCallId: "call-9",
        output: "3",
      });
      assert.ok(chunks.indexOf(input!) < chunks.indexOf(output!));
      assert.ok(chunks.indexOf(output!) < chunks.findIndex((chunk) => chunk.type === "text-start"));
    } finally {
      await host.shutdown();
    }
  });
});

// ------------------------------------------------------------ over a loopback socket

/** Serves `fetch` on 127.0.0.1 with the runtime's own server, as http.md lists them. */
async function serveLoopback(
  fetch: (request: Request) => Response | Promise<Response>,
): Promise<{ url: string; close: () => Promise<void> }> {
  const runtime = globalThis as unknown as {
    Deno?: {
      serve: (
        options: { hostname: string; port: number; onListen: () => void },
        handler: typeof fetch,
      ) => { addr: { port: number }; shutdown: () => Promise<void> };
    };
    Bun?: {
      serve: (options: { hostname: string; port: number; fetch: typeof fetch }) => {
        port: number;
        stop: (force: boolean) => Promise<void> | void;
      };
    };
  };
  if (runtime.Deno) {
    const server = runtime.Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen: () => {} },
      fetch,
    );
    return { url: `http://127.0.0.1:${server.addr.port}`, close: () => server.shutdown() };
  }
  if (runtime.Bun) {
    const server = runtime.Bun.serve({ hostname: "127.0.0.1", port: 0, fetch });
    return { url: `http://127.0.0.1:${server.port}`, close: async () => await server.stop(true) };
  }
  const { serve } = await import("@hono/node-server");
  return await new Promise((resolve) => {
    const server = serve({ fetch, hostname: "127.0.0.1", port: 0 }, (info) => {
      resolve({
        url: `http://127.0.0.1:${info.port}`,
        close: () =>
          new Promise<void>((done, fail) => {
            (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
            server.close((error) => (error ? fail(error) : done()));
          }),
      });
    });
  });
}

describe("over a loopback socket", () => {
  test("the client with the global fetch drives a served app; closing the events request aborts the subscription", async () => {
    const fake = fakeService();
    const server = await serveLoopback(
      threadApi(fake.service, { authorize: () => true, basePath: "/v1" }).fetch,
    );
    try {
      const client = threadClient({
        baseUrl: `${server.url}/v1`,
        headers: { authorization: "Bearer t" },
      });
      assert.equal((await client.create({ requestKey: "c-1" })).threadId, "t-new");
      assert.equal(await rejectsWith(threadClient({ baseUrl: server.url }).list()), "not_found");

      const controller = new AbortController();
      const seen: ThreadUpdate[] = [];
      const loop = (async () => {
        for await (const update of client.subscribe("t1", { signal: controller.signal })) {
          seen.push(update);
        }
      })();
      for (let i = 0; i < 400 && fake.subscriptions.length === 0; i++) {
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      const subscription = fake.subscriptions[0]!;
      subscription.push({ type: "batch", baseVersion: 3, version: 4, ops: [] });
      for (let i = 0; i < 400 && seen.length === 0; i++) {
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      assert.deepEqual(seen, [{ type: "batch", baseVersion: 3, version: 4, ops: [] }]);
      controller.abort();
      await loop;
      for (let i = 0; i < 400 && subscription.signal?.aborted !== true; i++) {
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      assert.equal(subscription.signal?.aborted, true, "the server's subscription is aborted");
    } finally {
      await server.close();
    }
  });
});
