// The HTTP contract of threadApi (http.md): building the app, its route table
// and authorize.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { FloretError, type ThreadService } from "@floret/engine";
import { threadApi } from "@floret/engine/http";
import { apiEngine } from "./support/http.ts";
import { errorOf } from "./support/http_api_support.ts";

/** The action of each route, as http.md's table has it. */
const ACTIONS: Record<string, string> = {
  "POST /threads": "create",
  "GET /threads": "list",
  "GET /threads/:threadId": "view",
  "PATCH /threads/:threadId": "setTitle",
  "DELETE /threads/:threadId": "delete",
  "GET /threads/:threadId/history": "history",
  "POST /threads/:threadId/messages": "send",
  "POST /threads/:threadId/interactions/:interactionId": "respond",
  "POST /threads/:threadId/cancel": "cancel",
  "POST /threads/:threadId/retry": "retry",
  "POST /threads/:threadId/fork": "fork",
  "POST /threads/:threadId/queue/:queueId/promote": "promoteQueued",
  "DELETE /threads/:threadId/queue/:queueId": "deleteQueued",
  "POST /threads/:threadId/compact": "compact",
  "GET /threads/:threadId/context": "context",
  "GET /threads/:threadId/artifacts/:artifactId": "artifact",
  "GET /threads/:threadId/idle": "waitForIdle",
  "GET /threads/:threadId/events": "subscribe",
  "POST /threads/:threadId/chat": "chat",
  "GET /threads/:threadId/chat/:chatId/stream": "chat",
  // Third wave (long work): goal changes ask about `send`, the children's facts about `view`.
  "PUT /threads/:threadId/goal": "send",
  "DELETE /threads/:threadId/goal": "send",
  "GET /threads/:threadId/parent-events": "view",
};

/**
 * With `turnControl: true`, beyond http.md's table: an edit puts the user's text into the
 * thread (`send`); steering redirects the turn under way (`steer`, DESIGN §11).
 */
const TURN_CONTROL: Record<string, string> = {
  "PATCH /threads/:threadId/queue/:queueId": "send",
  "POST /threads/:threadId/steer": "steer",
  "POST /threads/:threadId/queue/:queueId/steer": "steer",
};

/** The app's routes, one per method and path, read from hono's `app.routes`. */
function routesOf(app: ReturnType<typeof threadApi>): { method: string; path: string }[] {
  const seen = new Map<string, { method: string; path: string }>();
  for (const route of app.routes) {
    if (route.method === "ALL") continue;
    seen.set(`${route.method} ${route.path}`, { method: route.method, path: route.path });
  }
  return [...seen.values()];
}

describe("building the app", () => {
  test("authorize is required; a bad basePath is refused", async () => {
    const e = await apiEngine([]);
    for (const options of [undefined, null, {}, { authorize: "yes" }]) {
      assert.throws(
        () => threadApi(e.threads, options as never),
        (error: unknown) => error instanceof FloretError && error.code === "invalid_input",
      );
    }
    assert.throws(
      () => threadApi(e.threads, { authorize: () => true, basePath: "api/" }),
      (error: unknown) => error instanceof FloretError && error.code === "invalid_input",
    );
    await e.host.shutdown();
  });

  test("the app has exactly the routes of http.md's table", async () => {
    const e = await apiEngine([]);
    const routes = routesOf(e.app).map((r) => `${r.method} ${r.path}`).sort();
    assert.deepEqual(routes, Object.keys(ACTIONS).sort());
    assert.throws(
      () => threadApi(e.threads, { authorize: () => true, turnControl: "yes" as never }),
      (error: unknown) => error instanceof FloretError && error.code === "invalid_input",
    );
    await e.host.shutdown();
  });

  test("turnControl adds editQueued (authorized as send) and steering (as steer); a service without them gets none (404)", async () => {
    const e = await apiEngine([], { turnControl: true });
    const routes = routesOf(e.app).map((r) => `${r.method} ${r.path}`).sort();
    assert.deepEqual(routes, Object.keys({ ...ACTIONS, ...TURN_CONTROL }).sort());
    for (const [name, action] of Object.entries(TURN_CONTROL)) {
      const [method, path] = name.split(" ");
      e.checks.length = 0;
      e.calls.length = 0;
      e.verdict.value = false;
      const url = path.replace(":threadId", e.threadId).replace(":queueId", "q");
      const refused = await e.call(method, url, { key: "k", body: { text: "x" } });
      assert.equal(refused.status, 403, name);
      assert.deepEqual(e.checks.map((c) => [c.action, c.threadId]), [[action, e.threadId]]);
      assert.deepEqual(e.calls, [], name);
    }

    const { steer: _steer, editQueued: _edit, steerQueued: _sq, ...plain } = e
      .threads as ThreadService & {
        steer: unknown;
        editQueued: unknown;
        steerQueued: unknown;
      };
    let asked = 0;
    const app = threadApi(plain as ThreadService, {
      authorize: () => (asked++, true),
      turnControl: true,
    });
    assert.equal(routesOf(app).length, Object.keys(ACTIONS).length);
    const steer = await app.request(`/threads/${e.threadId}/steer`, {
      method: "POST",
      headers: { "idempotency-key": "s", "content-type": "application/json" },
      body: JSON.stringify({ text: "x" }),
    });
    assert.equal(steer.status, 404);
    assert.equal((await errorOf(steer)).code, "not_found");
    assert.equal(asked, 0);
    await e.host.shutdown();
  });
});

describe("authorize", () => {
  test("every route asks authorize first; false answers 403 and reaches no service method", async () => {
    const e = await apiEngine([]);
    for (const route of routesOf(e.app)) {
      const path = route.path.replace(":threadId", e.threadId).replace(/:[a-zA-Z]+/g, "x");
      e.calls.length = 0;
      e.checks.length = 0;
      e.verdict.value = false;
      const init = { key: "k-auth", body: route.method === "GET" ? undefined : {} };
      const refused = await e.call(route.method, path, init);
      const name = `${route.method} ${route.path}`;
      assert.equal(refused.status, 403, name);
      assert.equal((await errorOf(refused)).code, "forbidden", name);
      assert.deepEqual(e.calls, [], `${name} reached the service`);
      assert.equal(e.checks.length, 1, name);
      assert.equal(e.checks[0].action, ACTIONS[name], name);
      assert.equal(
        e.checks[0].threadId,
        route.path.includes(":threadId") ? e.threadId : undefined,
        name,
      );
      assert.ok(e.checks[0].request instanceof Request, name);

      e.verdict.value = "throw";
      const failed = await e.call(route.method, path, init);
      assert.equal(failed.status, 500, name);
      const error = await errorOf(failed);
      assert.equal(error.code, "internal", name);
      assert.doesNotMatch(error.message, /secret-token/, name);
      assert.deepEqual(e.calls, [], `${name} reached the service after a throw`);
    }
    await e.host.shutdown();
  });

  test("an unknown route answers 404 not_found before authorize runs", async () => {
    const e = await apiEngine([]);
    e.verdict.value = "throw";
    for (
      const [method, path] of [
        ["GET", "/nope"],
        ["GET", "/threads/a/b/c/d"],
        ["PUT", "/threads"],
        ["GET", `/threads/${e.threadId}/cancel`],
        ["GET", "/threads/"],
      ]
    ) {
      const response = await e.call(method, path);
      assert.equal(response.status, 404, `${method} ${path}`);
      assert.deepEqual((await errorOf(response)).code, "not_found");
    }
    assert.equal(e.checks.length, 0);
    await e.host.shutdown();
  });

  test("basePath prefixes every route; the bare paths are unknown", async () => {
    const e = await apiEngine([], { basePath: "/api/v1" });
    assert.equal((await e.call("GET", `/api/v1/threads/${e.threadId}`)).status, 200);
    assert.equal((await e.call("GET", `/threads/${e.threadId}`)).status, 404);
    assert.equal(e.checks.length, 1);
    await e.host.shutdown();
  });
});
