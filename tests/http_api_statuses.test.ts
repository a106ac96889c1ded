// The HTTP contract of threadApi (http.md): routes, statuses, request keys
// and bodies.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import { defineTool, FloretError, type ThreadService } from "@floret/engine";
import { threadApi } from "@floret/engine/http";
import { apiEngine, spyService } from "./support/http.ts";
import { errorOf } from "./support/http_api_support.ts";

describe("routes and statuses", () => {
  test("each route answers its success status and shape", async () => {
    const big = defineTool({
      name: "big",
      description: "Returns a long text",
      input: z.object({}),
      execute: () => "y".repeat(70_000),
    });
    const e = await apiEngine([
      { toolCalls: [{ name: "big", arguments: {} }] },
      { text: "done" },
      { text: "regenerated" },
    ], { tools: [big] });
    const { threadId } = e;
    const t = `/threads/${threadId}`;

    const created = await e.call("POST", "/threads", { key: "c2", body: { title: "Hello" } });
    assert.equal(created.status, 201);
    const createdBody = await created.json() as { threadId: string; view: { title: string } };
    assert.equal(createdBody.view.title, "Hello");

    const list = await e.call("GET", "/threads?limit=10");
    assert.equal(list.status, 200);
    assert.equal((await list.json() as { threads: unknown[] }).threads.length, 2);

    const sent = await e.call("POST", `${t}/messages`, {
      key: "m1",
      body: { input: { text: "go" } },
    });
    assert.equal(sent.status, 202);
    const sentBody = await sent.json() as { turnId: string; queued: boolean; threadId: string };
    assert.equal(sentBody.queued, false);
    assert.equal(sentBody.threadId, threadId);

    const idle = await e.call("GET", `${t}/idle?timeoutMs=5000`);
    assert.equal(idle.status, 200);
    const view = await idle.json() as {
      status: string;
      items: { id: string; kind: string; tool?: { artifactId?: string } }[];
    };
    assert.equal(view.status, "idle");

    const artifactId = view.items.find((i) => i.kind === "tool")?.tool?.artifactId;
    assert.ok(artifactId, "the long output was kept as an artifact");
    const artifact = await e.call("GET", `${t}/artifacts/${artifactId}`);
    assert.equal(artifact.status, 200);
    assert.equal((await artifact.json() as { text: string }).text.length, 70_000);

    assert.equal((await e.call("GET", t)).status, 200);
    const history = await e.call("GET", `${t}/history?limit=2`);
    assert.equal(history.status, 200);
    const page = await history.json() as { items: unknown[]; hasMore: boolean; before?: string };
    assert.equal(page.items.length, 2);
    assert.equal(page.hasMore, true);

    const titled = await e.call("PATCH", t, { key: "t1", body: { title: "Renamed" } });
    assert.equal(titled.status, 200);
    assert.equal((await titled.json() as { view: { title: string } }).view.title, "Renamed");

    const context = await e.call("GET", `${t}/context`);
    assert.equal(context.status, 200);
    assert.equal(
      typeof (await context.json() as { estimateTokens: number }).estimateTokens,
      "number",
    );

    const compacted = await e.call("POST", `${t}/compact`, { key: "cp" });
    assert.equal(compacted.status, 200);
    assert.equal((await compacted.json() as { outcome: string }).outcome, "noop");

    const cancelled = await e.call("POST", `${t}/cancel`, {
      key: "x1",
      body: { mode: "graceful" },
    });
    assert.equal(cancelled.status, 200);

    const retried = await e.call("POST", `${t}/retry`, { key: "r1", body: {} });
    assert.equal(retried.status, 202);
    assert.equal(typeof (await retried.json() as { turnId: string }).turnId, "string");
    await e.call("GET", `${t}/idle?timeoutMs=5000`);

    const forked = await e.call("POST", `${t}/fork`, {
      key: "f1",
      body: { atItemId: view.items[0].id },
    });
    assert.equal(forked.status, 201);
    assert.notEqual((await forked.json() as { threadId: string }).threadId, threadId);

    const responded = await e.call("POST", `${t}/interactions/int_none`, {
      key: "rs",
      body: { decision: "approve" },
    });
    assert.equal(responded.status, 404);
    assert.equal((await errorOf(responded)).code, "interaction_not_found");

    const deleted = await e.call("DELETE", t, { key: "d1" });
    assert.equal(deleted.status, 204);
    assert.equal(await deleted.text(), "");
    assert.equal((await e.call("GET", t)).status, 404);
    await e.host.shutdown();
  });

  test("queue routes: promote answers 202, delete answers 200", async () => {
    const e = await apiEngine([
      { error: { status: 400, retry: "never" }, delayMs: 30 },
      { text: "promoted" },
    ]);
    const t = `/threads/${e.threadId}`;
    await e.call("POST", `${t}/messages`, { key: "a", body: { input: { text: "one" } } });
    await e.call("POST", `${t}/messages`, { key: "b", body: { input: { text: "two" } } });
    await e.call("POST", `${t}/messages`, { key: "c", body: { input: { text: "three" } } });
    const view = await (await e.call("GET", `${t}/idle?timeoutMs=5000`)).json() as {
      queue: { id: string }[];
    };
    const [two, three] = view.queue;
    const removed = await e.call("DELETE", `${t}/queue/${three.id}`, { key: "dq" });
    assert.equal(removed.status, 200);
    const promoted = await e.call("POST", `${t}/queue/${two.id}/promote`, { key: "pq" });
    assert.equal(promoted.status, 202);
    assert.equal((await promoted.json() as { view: { status: string } }).view.status, "running");
    await e.call("GET", `${t}/idle?timeoutMs=5000`);
    await e.host.shutdown();
  });

  test("editQueued and steer: 200 {view}; a stale expectedText is 409; unknown fields 400", async () => {
    const e = await apiEngine([{ hang: true }, { text: "after" }], { turnControl: true });
    const t = `/threads/${e.threadId}`;
    await e.call("POST", `${t}/messages`, { key: "a", body: { input: { text: "one" } } });
    const queued = await e.call("POST", `${t}/messages`, {
      key: "b",
      body: { input: { text: "two" } },
    });
    const queueId = (await queued.json() as { view: { queue: { id: string }[] } }).view.queue[0]
      .id;
    const edit = { text: "TWO", expectedText: "two" };
    const edited = await e.call("PATCH", `${t}/queue/${queueId}`, { key: "e1", body: edit });
    assert.equal(edited.status, 200);
    const view = (await edited.json() as { view: { queue: { text: string }[] } }).view;
    assert.equal(view.queue[0].text, "TWO");
    // Same key, same body: the same answer; the text it expected is gone now.
    assert.equal(
      (await e.call("PATCH", `${t}/queue/${queueId}`, { key: "e1", body: edit })).status,
      200,
    );
    const stale = await e.call("PATCH", `${t}/queue/${queueId}`, { key: "e2", body: edit });
    assert.equal(stale.status, 409);
    assert.equal((await errorOf(stale)).code, "request_conflict");
    const extra = await e.call("PATCH", `${t}/queue/${queueId}`, {
      key: "e3",
      body: { ...edit, expectedText: "TWO", extra: 1 },
    });
    assert.equal(extra.status, 400);
    assert.equal((await e.call("PATCH", `${t}/queue/${queueId}`, { body: edit })).status, 400);

    const steered = await e.call("POST", `${t}/steer`, { key: "s1", body: { text: "faster" } });
    assert.equal(steered.status, 200);
    assert.ok((await steered.json() as { view: { status: string } }).view);
    const bad = await e.call("POST", `${t}/steer`, { key: "s2", body: { text: 3 } });
    assert.equal(bad.status, 400);
    assert.deepEqual(
      e.calls.filter((name) => name === "editQueued" || name === "steer"),
      ["editQueued", "editQueued", "editQueued", "steer"],
    );
    await e.call("POST", `${t}/cancel`, { key: "c" });
    await e.host.shutdown();
  });

  test("errors map to http.md's statuses: 404, 408, 409, 425, 503", async () => {
    const e = await apiEngine([{ text: "ok" }, { hang: true }]);
    const t = `/threads/${e.threadId}`;
    const expect = async (response: Promise<Response>, status: number, code: string) => {
      const r = await response;
      assert.equal(r.status, status, code);
      assert.equal((await errorOf(r)).code, code);
    };
    await expect(e.call("GET", "/threads/thread_missing"), 404, "thread_not_found");
    await expect(e.call("POST", `${t}/retry`, { key: "r0" }), 409, "no_retry_target");
    await e.call("POST", `${t}/messages`, { key: "m1", body: { input: { text: "hi" } } });
    await e.call("GET", `${t}/idle?timeoutMs=5000`);
    await expect(
      e.call("POST", `${t}/messages`, { key: "m1", body: { input: { text: "other" } } }),
      409,
      "request_conflict",
    );
    await e.call("POST", `${t}/retry`, { key: "r1" });
    await expect(e.call("GET", `${t}/idle?timeoutMs=0`), 408, "timeout");
    await expect(e.call("POST", `${t}/retry`, { key: "r2" }), 409, "thread_busy");
    await e.call("POST", `${t}/cancel`, { key: "c1" });
    await e.host.shutdown();
    await expect(e.call("GET", t), 503, "host_closed");
  });

  test("manual compaction above the target compacts: 200 with its outcome", async () => {
    const e = await apiEngine([{ text: "ok" }, { text: "ok again" }, { text: "The summary." }]);
    const t = `/threads/${e.threadId}`;
    const text = "word ".repeat(60_000);
    await e.call("POST", `${t}/messages`, { key: "m", body: { input: { text } } });
    await e.call("GET", `${t}/idle?timeoutMs=5000`);
    await e.call("POST", `${t}/messages`, { key: "m2", body: { input: { text: "more" } } });
    await e.call("GET", `${t}/idle?timeoutMs=5000`);
    const response = await e.call("POST", `${t}/compact`, { key: "cp" });
    assert.equal(response.status, 200);
    assert.equal((await response.json() as { outcome: string }).outcome, "compacted");
    await e.host.shutdown();
  });

  test("every code has its status; messages are the server's own, never the engine's", async () => {
    const table: [string, number][] = [
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
    const secret = "PROMPT-TEXT sk-live-KEY request-key-42";
    for (const [code, status] of table) {
      const failing = new Proxy({} as ThreadService, {
        get: () => () => {
          const error = new FloretError(code as never, `Failed: ${secret}`);
          return Promise.reject(error);
        },
      });
      const app = threadApi(failing, { authorize: () => true });
      const response = await app.request("/threads/thread_a");
      assert.equal(response.status, status, code);
      const text = await response.text();
      assert.deepEqual(Object.keys(JSON.parse(text).error).sort(), ["code", "message"]);
      assert.equal(JSON.parse(text).error.code, code);
      assert.doesNotMatch(text, /PROMPT|sk-live|request-key|at .*\.ts/);
    }
    const broken = new Proxy({} as ThreadService, {
      get: () => () => Promise.reject(new TypeError(`boom ${secret}`)),
    });
    const response = await threadApi(broken, { authorize: () => true }).request("/threads");
    assert.equal(response.status, 500);
    const text = await response.text();
    assert.equal(JSON.parse(text).error.code, "internal");
    assert.doesNotMatch(text, /boom|PROMPT|sk-live|stack/);
  });
});

describe("request keys and bodies", () => {
  test("a missing or invalid Idempotency-Key is 400 and writes nothing", async () => {
    const e = await apiEngine([{ text: "ok" }]);
    const t = `/threads/${e.threadId}`;
    for (const key of [undefined, "", "   ", "k".repeat(257)]) {
      const response = await e.call("POST", `${t}/messages`, {
        key,
        body: { input: { text: "hi" } },
      });
      assert.equal(response.status, 400, `key ${JSON.stringify(key)}`);
      assert.equal((await errorOf(response)).code, "invalid_input");
      const created = await e.call("POST", "/threads", { key, body: {} });
      assert.equal(created.status, 400);
    }
    assert.ok(!e.calls.includes("send") && !e.calls.includes("create"));
    const view = await e.threads.view(e.threadId);
    assert.equal(view.turns.length, 0);
    assert.equal((await e.threads.list()).threads.length, 1);
    // A key of exactly 256 characters, padded with spaces, is fine.
    const ok = await e.call("POST", `${t}/messages`, {
      key: `  ${"k".repeat(256)}  `,
      body: { input: { text: "hi" } },
    });
    assert.equal(ok.status, 202);
    await e.threads.waitForIdle(e.threadId, { timeoutMs: 5000 });
    await e.host.shutdown();
  });

  test("the same key replays the result; another body under it is 409 request_conflict", async () => {
    const e = await apiEngine([{ text: "once" }]);
    const first = await e.call("POST", "/threads", { key: "new", body: { title: "A" } });
    const again = await e.call("POST", "/threads", { key: " new ", body: { title: "A" } });
    assert.equal(first.status, 201);
    assert.equal(again.status, 201);
    const a = await first.json() as { threadId: string };
    const b = await again.json() as { threadId: string };
    assert.equal(b.threadId, a.threadId);
    const conflict = await e.call("POST", "/threads", { key: "new", body: { title: "B" } });
    assert.equal(conflict.status, 409);
    const error = await errorOf(conflict);
    assert.equal(error.code, "request_conflict");
    assert.doesNotMatch(error.message, /new/);
    await e.host.shutdown();
  });

  test("bad bodies are refused before the service: unknown fields, wrong types, bad JSON, wrong content type, over 25 MiB", async () => {
    const e = await apiEngine([{ text: "ok" }]);
    const t = `/threads/${e.threadId}`;
    const cases: [string, Parameters<typeof e.call>[2], number][] = [
      ["unknown field", { key: "k", body: { input: { text: "hi" }, extra: 1 } }, 400],
      ["nested unknown field", { key: "k", body: { input: { text: "hi", more: true } } }, 400],
      ["wrong type", { key: "k", body: { input: { text: 42 } } }, 400],
      ["missing field", { key: "k", body: {} }, 400],
      ["bad JSON", { key: "k", body: "{not json" }, 400],
      [
        "text/plain",
        { key: "k", body: '{"input":{"text":"hi"}}', headers: { "content-type": "text/plain" } },
        415,
      ],
      ["too large", { key: "k", body: { input: { text: "z".repeat(25 * 1024 * 1024) } } }, 400],
    ];
    for (const [name, init, status] of cases) {
      const response = await e.call("POST", `${t}/messages`, init);
      assert.equal(response.status, status, name);
      const error = await errorOf(response);
      assert.equal(error.code, "invalid_input", name);
      assert.doesNotMatch(error.message, /hi|zzz|not json/, name);
    }
    assert.ok(!e.calls.includes("send"), "the service saw none of them");
    assert.equal((await e.threads.view(e.threadId)).turns.length, 0);
    // The key was not consumed.
    const ok = await e.call("POST", `${t}/messages`, { key: "k", body: { input: { text: "hi" } } });
    assert.equal(ok.status, 202);
    await e.threads.waitForIdle(e.threadId, { timeoutMs: 5000 });
    // Unknown fields on other routes too.
    const title = await e.call("PATCH", t, { key: "t", body: { title: "x", color: "red" } });
    assert.equal(title.status, 400);
    const cancel = await e.call("POST", `${t}/cancel`, { key: "c", body: { mode: "soon" } });
    assert.equal(cancel.status, 400);
    await e.host.shutdown();
  });

  test("bad query parameters are 400 invalid_input", async () => {
    const e = await apiEngine([]);
    for (
      const path of [
        "/threads?limit=abc",
        `/threads/${e.threadId}/idle?timeoutMs=-1`,
        `/threads/${e.threadId}/history?limit=0`,
      ]
    ) {
      const response = await e.call("GET", path);
      assert.equal(response.status, 400, path);
      assert.equal((await errorOf(response)).code, "invalid_input");
    }
    await e.host.shutdown();
  });
});

test("the spy sees service calls (so the tests above can fail)", async () => {
  const calls: string[] = [];
  const e = await apiEngine([]);
  const spied = spyService(e.threads, calls);
  await spied.view(e.threadId);
  assert.deepEqual(calls, ["view"]);
  await e.host.shutdown();
});
