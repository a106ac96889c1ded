// Black-box checks of `@floret/engine/http`, written from http.md and the
// "@floret/engine/http" part of public-api.d.ts only: the error table,
// request keys and bodies.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { type ErrorCode, FloretError } from "@floret/engine";
import { threadApi, threadClient } from "@floret/engine/http";
import {
  errorOf,
  fakeService,
  get,
  json,
  realEngine,
  rejectsWith,
} from "./support/http_contract_support.ts";
import { K, ROWS } from "./support/http_contract_rows.ts";

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
