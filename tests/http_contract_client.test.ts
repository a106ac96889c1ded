// Black-box checks of `@floret/engine/http`, written from http.md and the
// "@floret/engine/http" part of public-api.d.ts only: the client's errors and
// headers, and the client over a loopback socket.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { type ThreadService, type ThreadUpdate } from "@floret/engine";
import { threadApi, threadClient } from "@floret/engine/http";
import {
  fakeService,
  realEngine,
  rejectsWith,
  serveLoopback,
} from "./support/http_contract_support.ts";

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
      for (let i = 0; i < 4000 && fake.subscriptions.length === 0; i++) {
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      const subscription = fake.subscriptions[0]!;
      subscription.push({ type: "batch", baseVersion: 3, version: 4, ops: [] });
      for (let i = 0; i < 4000 && seen.length === 0; i++) {
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      assert.deepEqual(seen, [{ type: "batch", baseVersion: 3, version: 4, ops: [] }]);
      controller.abort();
      await loop;
      for (let i = 0; i < 4000 && subscription.signal?.aborted !== true; i++) {
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      assert.equal(subscription.signal?.aborted, true, "the server's subscription is aborted");
    } finally {
      await server.close();
    }
  });
});
