// Black-box checks of `@floret/engine/http`, written from http.md and the
// "@floret/engine/http" part of public-api.d.ts only: the chat route.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { FloretError } from "@floret/engine";
import { threadApi } from "@floret/engine/http";
import {
  allow,
  chatBody,
  type Check,
  errorOf,
  json,
  parseSse,
  realEngine,
} from "./support/http_contract_support.ts";

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
