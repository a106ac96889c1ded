// threadClient: a ThreadService over the API, with errors, headers and subscriptions.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import { defineTool, FloretError, type ThreadUpdate } from "@floret/engine";
import { threadApi, threadClient } from "@floret/engine/http";
import { engine } from "./support/engine.ts";

const isCode = (code: string) => (error: unknown) =>
  error instanceof FloretError && error.code === code;

const BASE = "http://127.0.0.1:9/api";

describe("threadClient", () => {
  test("every query answers as the in-process service does", async () => {
    const big = defineTool({
      name: "big",
      description: "Long output",
      input: z.object({}),
      execute: () => "q".repeat(70_000),
    });
    const e = await engine([{ toolCalls: [{ name: "big", arguments: {} }] }, { text: "ok" }], {
      tools: [big],
    });
    const app = threadApi(e.threads, { authorize: () => true, basePath: "/api" });
    const client = threadClient({ baseUrl: `${BASE}/`, fetch: app.fetch });
    await client.setTitle({ threadId: e.threadId, requestKey: "t", title: "Remote" });
    await client.send({ threadId: e.threadId, requestKey: "m", input: { text: "go" } });
    const view = await client.waitForIdle(e.threadId, { timeoutMs: 5000 });
    assert.deepEqual(view, await e.threads.view(e.threadId));
    assert.deepEqual(await client.list({ limit: 5 }), await e.threads.list({ limit: 5 }));
    assert.deepEqual(
      await client.history(e.threadId, { limit: 2 }),
      await e.threads.history(e.threadId, { limit: 2 }),
    );
    assert.deepEqual(await client.context(e.threadId), await e.threads.context(e.threadId));
    const artifactId = view.items.find((i) => i.kind === "tool")?.tool?.artifactId!;
    assert.deepEqual(
      await client.artifact(e.threadId, artifactId),
      await e.threads.artifact(e.threadId, artifactId),
    );
    const compacted = await client.compact({ threadId: e.threadId, requestKey: "c" });
    assert.equal(compacted.outcome, "noop");
    const fork = await client.fork({ threadId: e.threadId, requestKey: "f" });
    assert.equal((await e.threads.view(fork.threadId)).forkedFrom?.threadId, e.threadId);
    await client.delete({ threadId: fork.threadId, requestKey: "d" });
    await client.delete({ threadId: fork.threadId, requestKey: "d" }); // a replay succeeds
    await assert.rejects(client.view(fork.threadId), isCode("thread_not_found"));
    await e.host.shutdown();
  });

  test("forbidden and not_found are codes of their own; headers reach authorize", async () => {
    const e = await engine([]);
    const seen: string[] = [];
    const app = threadApi(e.threads, {
      authorize: ({ request }) => {
        seen.push(request.headers.get("authorization") ?? "");
        return request.headers.get("authorization") === "Bearer good";
      },
    });
    const denied = threadClient({
      baseUrl: "http://127.0.0.1",
      fetch: app.fetch,
      headers: { authorization: "Bearer bad" },
    });
    await assert.rejects(denied.view(e.threadId), isCode("forbidden"));
    let calls = 0;
    const allowed = threadClient({
      baseUrl: "http://127.0.0.1",
      fetch: app.fetch,
      headers: () => {
        calls++;
        return { authorization: "Bearer good" };
      },
    });
    assert.equal((await allowed.view(e.threadId)).threadId, e.threadId);
    assert.equal(calls, 1);
    assert.deepEqual(seen, ["Bearer bad", "Bearer good"]);
    const wrongBase = threadClient({ baseUrl: "http://127.0.0.1/other", fetch: app.fetch });
    await assert.rejects(wrongBase.view(e.threadId), isCode("not_found"));
    await e.host.shutdown();
  });

  test("the request key and content type replace a caller's header of the same name", async () => {
    const sent: Array<[string | null, string | null, string | null]> = [];
    const client = threadClient({
      baseUrl: "http://127.0.0.1",
      fetch: (request) => {
        const h = request.headers;
        sent.push([h.get("idempotency-key"), h.get("content-type"), h.get("x-trace")]);
        return Response.json({ threadId: "t", view: {} }, { status: 201 });
      },
      headers: { "Idempotency-Key": "theirs", "Content-Type": "text/plain", "X-Trace": "a" },
    });
    await client.create({ requestKey: "mine" });
    await client.view("t").catch(() => {});
    assert.deepEqual(sent, [["mine", "application/json", "a"], ["theirs", "text/plain", "a"]]);
    const badKey = threadClient({ baseUrl: "http://127.0.0.1", fetch: () => new Response() });
    await assert.rejects(badKey.create({ requestKey: "a\nb" }), isCode("invalid_input"));
  });

  test("failures the server does not describe are internal; an abort rejects with its reason", async () => {
    const broken = threadClient({
      baseUrl: "http://127.0.0.1",
      fetch: () => new Response("<html>bad gateway</html>", { status: 502 }),
    });
    await assert.rejects(broken.list(), isCode("internal"));
    const down = threadClient({
      baseUrl: "http://127.0.0.1",
      fetch: () => Promise.reject(new TypeError("connection refused")),
    });
    await assert.rejects(down.list(), isCode("internal"));
    const e = await engine([{ hang: true }]);
    const client = threadClient({
      baseUrl: "http://127.0.0.1",
      fetch: threadApi(e.threads, { authorize: () => true }).fetch,
    });
    await client.send({ threadId: e.threadId, requestKey: "m", input: { text: "go" } });
    await assert.rejects(
      client.waitForIdle(e.threadId, { timeoutMs: 20 }),
      isCode("timeout"),
    );
    const controller = new AbortController();
    const waiting = client.waitForIdle(e.threadId, { signal: controller.signal });
    controller.abort(new Error("stop waiting"));
    await assert.rejects(waiting, /stop waiting/);
    // In-process the same abort rejects with the same reason, not as an engine failure.
    const local = new AbortController();
    const reason = new Error("stop waiting here");
    const waitingHere = e.threads.waitForIdle(e.threadId, { signal: local.signal });
    local.abort(reason);
    await assert.rejects(waitingHere, (error) => error === reason);
    const already = AbortSignal.abort(reason);
    await assert.rejects(
      e.threads.waitForIdle(e.threadId, { signal: already }),
      (error) => error === reason,
    );
    await client.cancel({ threadId: e.threadId, requestKey: "c" });
    await e.host.shutdown();
  });

  test("bad options and inputs fail as the service would", async () => {
    for (const options of [undefined, {}, { baseUrl: "not a url" }, { baseUrl: "ftp://x" }]) {
      assert.throws(() => threadClient(options as never), isCode("invalid_input"));
    }
    const e = await engine([]);
    const client = threadClient({
      baseUrl: "http://127.0.0.1",
      fetch: threadApi(e.threads, { authorize: () => true }).fetch,
    });
    await assert.rejects(
      client.send({ threadId: e.threadId, requestKey: "ключ\n", input: { text: "x" } }),
      isCode("invalid_input"),
    );
    await assert.rejects(client.send(null as never), isCode("invalid_input"));
    for (const service of [e.threads, client]) {
      await assert.rejects(
        service.send({ threadId: e.threadId, requestKey: 5 as never, input: { text: "x" } }),
        isCode("invalid_input"),
      );
    }
    assert.equal((await e.threads.view(e.threadId)).items.length, 0, "nothing was sent");
    // Turn control needs an app built with turnControl: true.
    await assert.rejects(
      client.steer({ threadId: e.threadId, requestKey: "s", text: "x" }),
      isCode("not_found"),
    );
    await assert.rejects(
      client.editQueued({
        threadId: e.threadId,
        requestKey: "e",
        queueId: "q",
        text: "a",
        expectedText: "b",
      }),
      isCode("not_found"),
    );
    for (const threadId of ["", "..", "thread_missing", "a/b"]) {
      await assert.rejects(client.view(threadId), isCode("thread_not_found"));
    }
    await assert.rejects(client.list({ limit: 0 }), isCode("invalid_input"));
    await e.host.shutdown();
  });

  test("after a resync the client reconnects and keeps yielding batches after the view", async () => {
    const steps = Array.from(
      { length: 80 },
      (_, i) => ({ toolCalls: [{ name: "add", arguments: { a: i, b: 1 } }] }),
    );
    const e = await engine([...steps, { text: "done" }, { text: "second" }], {
      agent: { maxSteps: 100 },
    });
    const client = threadClient({
      baseUrl: "http://127.0.0.1",
      fetch: threadApi(e.threads, { authorize: () => true }).fetch,
    });
    const controller = new AbortController();
    const updates = client.subscribe(e.threadId, { signal: controller.signal })
      [Symbol.asyncIterator]();
    await client.send({ threadId: e.threadId, requestKey: "s1", input: { text: "go" } });
    await client.waitForIdle(e.threadId, { timeoutMs: 10_000 });
    const first = await updates.next();
    assert.deepEqual(first.value, { type: "resync", reason: "subscriber fell behind" });
    const view = await client.view(e.threadId);
    await client.send({ threadId: e.threadId, requestKey: "s2", input: { text: "again" } });
    const next = (await updates.next()).value as ThreadUpdate;
    assert.equal(next.type, "batch");
    if (next.type === "batch") assert.equal(next.baseVersion, view.viewVersion, "no gap");
    await client.waitForIdle(e.threadId, { timeoutMs: 5000 });
    controller.abort();
    assert.equal((await updates.next()).done, true, "an abort ends the loop quietly");
    await e.host.shutdown();
  });
});
