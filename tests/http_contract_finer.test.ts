// Black-box checks of `@floret/engine/http`, written from http.md and the
// "@floret/engine/http" part of public-api.d.ts only: the finer points of http.md.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import { defineAgent, defineTool, memoryStore, openHost } from "@floret/engine";
import { scriptedGateway } from "@floret/engine/testing";
import { threadApi, threadClient } from "@floret/engine/http";
import {
  chatBody,
  errorOf,
  fakeService,
  get,
  json,
  parseSse,
  rejectsWith,
} from "./support/http_contract_support.ts";
import { K } from "./support/http_contract_rows.ts";

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
