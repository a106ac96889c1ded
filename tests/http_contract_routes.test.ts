// Black-box checks of `@floret/engine/http`, written from http.md and the
// "@floret/engine/http" part of public-api.d.ts only: the route table, authorize,
// unknown routes and basePath.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { FloretError } from "@floret/engine";
import { threadApi, threadClient } from "@floret/engine/http";
import {
  allow,
  chatBody,
  type Check,
  errorOf,
  fakeService,
  get,
  json,
  rejectsWith,
  viewOf,
} from "./support/http_contract_support.ts";
import { K, ROWS } from "./support/http_contract_rows.ts";

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
