// Tenants (DESIGN §11): a thread belongs to the tenant whose request created
// it; another tenant neither sees it, nor reaches it by any route, nor gets it
// back by replaying its request key.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { FloretError } from "@floret/engine";
import { threadApi } from "@floret/engine/http";
import { addTool, engine } from "./support/engine.ts";

/** `x-user: alice` is tenant "a", `bob` tenant "b", `admin` no tenant; anything else is refused. */
function tenantOf(request: Request): boolean | { tenant: string } {
  const user = request.headers.get("x-user");
  if (user === "alice") return { tenant: "a" };
  if (user === "bob") return { tenant: "b" };
  return user === "admin";
}

async function served(options: { denyRespond?: boolean } = {}) {
  const e = await engine([{ text: "hello" }], { tools: [addTool()] });
  const asked: string[] = [];
  const app = threadApi(e.threads, {
    authorize: ({ request, action }) => {
      asked.push(action);
      if (options.denyRespond && action === "respond") return false;
      return tenantOf(request);
    },
  });
  const call = (
    user: string,
    method: string,
    path: string,
    init: { key?: string; body?: unknown } = {},
  ) =>
    app.request(path, {
      method,
      headers: {
        "x-user": user,
        ...(init.key === undefined ? {} : { "idempotency-key": init.key }),
        ...(init.body === undefined ? {} : { "content-type": "application/json" }),
      },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
    });
  return { e, app, call, asked };
}

const codeOf = async (response: Response): Promise<string> =>
  ((await response.json()) as { error: { code: string } }).error.code;

describe("tenants in process", () => {
  test("create({ tenant }) sets view.tenant; list({ tenant }) shows only that tenant's threads", async () => {
    const e = await engine([]);
    const a = await e.threads.create({ requestKey: "k", tenant: "a" });
    const b = await e.threads.create({ requestKey: "k", tenant: "b" });
    assert.equal(a.view.tenant, "a");
    assert.equal(b.view.tenant, "b");
    // The same key from two tenants is two requests; a replay stays within its tenant.
    assert.notEqual(a.threadId, b.threadId);
    assert.equal((await e.threads.create({ requestKey: "k", tenant: "a" })).threadId, a.threadId);
    assert.equal((await e.threads.view(a.threadId)).tenant, "a");
    const listA = await e.threads.list({ tenant: "a" });
    assert.deepEqual(listA.threads.map((t) => [t.threadId, t.tenant]), [[a.threadId, "a"]]);
    // Without a tenant, every thread (the untenanted one created by engine() too).
    assert.equal((await e.threads.list()).threads.length, 3);
    // A fork belongs to its source's tenant.
    const forked = await e.threads.fork({ threadId: a.threadId, requestKey: "f" });
    assert.equal(forked.view.tenant, "a");
    await assert.rejects(
      e.threads.create({ requestKey: "x", tenant: "" }),
      (error: unknown) => error instanceof FloretError && error.code === "invalid_input",
    );
    await e.host.shutdown();
  });
});

describe("tenants over HTTP", () => {
  test("another tenant's thread is 404 thread_not_found on every route; list hides it", async () => {
    const { e, call } = await served();
    const created = await call("alice", "POST", "/threads", {
      key: "c1",
      body: { title: "Alice's plans" },
    });
    assert.equal(created.status, 201);
    const { threadId, view } = (await created.json()) as {
      threadId: string;
      view: { tenant?: string };
    };
    assert.equal(view.tenant, "a");
    const t = `/threads/${threadId}`;
    const probes: [string, string, { key?: string; body?: unknown }][] = [
      ["GET", t, {}],
      ["PATCH", t, { key: "p", body: { title: "mine" } }],
      ["DELETE", t, { key: "d" }],
      ["GET", `${t}/history`, {}],
      ["POST", `${t}/messages`, { key: "m", body: { input: { text: "hi" } } }],
      ["POST", `${t}/interactions/i1`, { key: "r", body: { decision: "approve" } }],
      ["POST", `${t}/cancel`, { key: "x", body: {} }],
      ["POST", `${t}/retry`, { key: "y", body: {} }],
      ["POST", `${t}/fork`, { key: "f", body: {} }],
      ["POST", `${t}/compact`, { key: "k", body: {} }],
      ["GET", `${t}/context`, {}],
      ["GET", `${t}/artifacts/a1`, {}],
      ["GET", `${t}/idle?timeoutMs=10`, {}],
      ["GET", `${t}/events`, {}],
      ["POST", `${t}/chat`, {
        body: { messages: [{ id: "u1", role: "user", parts: [{ type: "text", text: "hi" }] }] },
      }],
      ["GET", `/threads?parentThreadId=${threadId}`, {}],
    ];
    for (const [method, path, init] of probes) {
      const response = await call("bob", method, path, init);
      assert.equal(response.status, 404, `${method} ${path}`);
      assert.equal(await codeOf(response), "thread_not_found", `${method} ${path}`);
    }
    // A thread that does not exist answers the same.
    const missing = await call("bob", "GET", "/threads/thread_nope");
    assert.equal(missing.status, 404);
    // Bob's list is empty; Alice's holds her thread; the admin (no tenant) sees all.
    const bobList = (await (await call("bob", "GET", "/threads")).json()) as { threads: unknown[] };
    assert.deepEqual(bobList.threads, []);
    const aliceList = (await (await call("alice", "GET", "/threads")).json()) as {
      threads: { threadId: string; title?: string }[];
    };
    assert.deepEqual(aliceList.threads.map((x) => x.threadId), [threadId]);
    // Nothing Bob tried changed Alice's thread.
    const mine = await call("alice", "GET", t);
    assert.equal(mine.status, 200);
    const after = (await mine.json()) as { title?: string; items: unknown[] };
    assert.equal(after.title, "Alice's plans");
    assert.equal(after.items.length, 0);
    await e.host.shutdown();
  });

  test("a replayed create key from another tenant is a new request, never the other's thread", async () => {
    const { e, call } = await served();
    const a =
      (await (await call("alice", "POST", "/threads", { key: "same", body: {} })).json()) as {
        threadId: string;
      };
    const replay = await call("bob", "POST", "/threads", { key: "same", body: {} });
    assert.equal(replay.status, 201);
    const b = (await replay.json()) as { threadId: string; view: { tenant?: string } };
    assert.notEqual(b.threadId, a.threadId);
    assert.equal(b.view.tenant, "b");
    // Alice's own replay still returns hers, and she still reaches it.
    const again =
      (await (await call("alice", "POST", "/threads", { key: "same", body: {} })).json()) as {
        threadId: string;
      };
    assert.equal(again.threadId, a.threadId);
    assert.equal((await call("alice", "GET", `/threads/${a.threadId}`)).status, 200);
    // A tenant request on a thread of no tenant is 404 too.
    assert.equal((await call("alice", "GET", `/threads/${e.threadId}`)).status, 404);
    assert.equal((await call("admin", "GET", `/threads/${a.threadId}`)).status, 200);
    await e.host.shutdown();
  });

  test("a malformed authorize answer is refused, never widened", async () => {
    const e = await engine([]);
    for (const verdict of [{ tenant: "" }, { tenant: 5 }, {}, "yes", 1]) {
      const app = threadApi(e.threads, { authorize: () => verdict as never });
      const response = await app.request("/threads");
      assert.equal(response.status, 403, JSON.stringify(verdict));
    }
    await e.host.shutdown();
  });

  test("approvals through the chat route are authorized as respond", async () => {
    const { e, call, asked } = await served({ denyRespond: true });
    const created =
      (await (await call("alice", "POST", "/threads", { key: "c", body: {} })).json()) as {
        threadId: string;
      };
    const body = {
      messages: [
        { id: "u1", role: "user", parts: [{ type: "text", text: "add" }] },
        {
          id: "a1",
          role: "assistant",
          parts: [{
            type: "tool-add",
            state: "approval-responded",
            approval: { id: "interaction_x", approved: true },
          }],
        },
      ],
    };
    const response = await call("alice", "POST", `/threads/${created.threadId}/chat`, { body });
    assert.equal(response.status, 403);
    assert.equal(await codeOf(response), "forbidden");
    assert.ok(asked.includes("respond"));
    await e.host.shutdown();
  });
});
