// The two streams of threadApi: the events route (SSE) and the AI SDK chat route.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import type { ThreadService, ThreadUpdate, ThreadView } from "@floret/engine";
import { threadApi } from "@floret/engine/http";
import { apiEngine, readSse } from "./support/http.ts";
import { uiChunksOf } from "./support/ui_chunks.ts";

describe("events (SSE)", () => {
  test("view first, then the later batches in order, ending when the host shuts down", async () => {
    const e = await apiEngine([{ text: "streamed answer", reasoning: "hmm", delayMs: 5 }]);
    const response = await e.call("GET", `/threads/${e.threadId}/events`);
    assert.equal(response.status, 200);
    assert.match(response.headers.get("content-type") ?? "", /^text\/event-stream/);
    await e.threads.send({ threadId: e.threadId, requestKey: "s", input: { text: "go" } });
    await e.threads.waitForIdle(e.threadId, { timeoutMs: 5000 });
    const settled = await e.threads.view(e.threadId);
    await e.host.shutdown();
    const events = await readSse(response);
    assert.equal(events[0].event, "view");
    const view = JSON.parse(events[0].data!) as ThreadView;
    assert.equal(view.threadId, e.threadId);
    const batches = events.slice(1).map((event) => {
      assert.equal(event.event, "batch");
      return JSON.parse(event.data!) as ThreadUpdate & { type: "batch" };
    });
    assert.ok(batches.length > 1);
    let last = view.viewVersion;
    for (const batch of batches) {
      assert.ok(batch.version > view.viewVersion, "nothing the view already holds");
      assert.equal(batch.baseVersion, last, "no gaps");
      last = batch.version;
    }
    assert.equal(last, settled.viewVersion);
  });

  test("a reader that stops reading gets one resync from the engine, then the stream ends", async () => {
    const steps = Array.from(
      { length: 80 },
      (_, i) => ({ toolCalls: [{ name: "add", arguments: { a: i, b: 1 } }] }),
    );
    const e = await apiEngine([...steps, { text: "done" }], { agent: { maxSteps: 100 } });
    const response = await e.call("GET", `/threads/${e.threadId}/events`);
    const reader = response.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    assert.match(first, /^event: view\n/);
    // Not reading while the thread runs 80 steps.
    await e.threads.send({ threadId: e.threadId, requestKey: "s", input: { text: "go" } });
    await e.threads.waitForIdle(e.threadId, { timeoutMs: 10_000 });
    let rest = "";
    for (;;) {
      const chunk = await reader.read();
      if (chunk.done) break;
      rest += new TextDecoder().decode(chunk.value);
    }
    assert.equal(
      rest,
      'event: resync\ndata: {"type":"resync","reason":"subscriber fell behind"}\n\n',
    );
    await e.host.shutdown();
  });

  test("closing the request ends the subscription", async () => {
    const e = await apiEngine([]);
    let returned = 0;
    const counting: ThreadService = {
      ...e.threads,
      subscribe: (threadId, options) => {
        const inner = e.threads.subscribe(threadId, options)[Symbol.asyncIterator]();
        return {
          [Symbol.asyncIterator]: () => ({
            next: () => inner.next(),
            return: () => {
              returned++;
              return inner.return!();
            },
          }),
        };
      },
    };
    const app = threadApi(counting, { authorize: () => true });
    const controller = new AbortController();
    const response = await app.request(`/threads/${e.threadId}/events`, {
      signal: controller.signal,
    });
    const reader = response.body!.getReader();
    await reader.read();
    const pending = reader.read();
    controller.abort();
    assert.equal((await pending).done, true);
    assert.ok(returned >= 1, "the subscription was returned");
    // A reader that cancels the body ends it too.
    const second = await app.request(`/threads/${e.threadId}/events`);
    const before = returned;
    await second.body!.cancel();
    assert.ok(returned > before);
    await e.host.shutdown();
  });

  test("a ': ping' comment line goes out at the keep-alive interval", async () => {
    const e = await apiEngine([]);
    const app = threadApi(e.threads, { authorize: () => true, pingIntervalMs: 20 });
    assert.throws(() => threadApi(e.threads, { authorize: () => true, pingIntervalMs: 0 }));
    const controller = new AbortController();
    const response = await app.request(`/threads/${e.threadId}/events`, {
      signal: controller.signal,
    });
    const reader = response.body!.getReader();
    let text = "";
    while (!text.includes(": ping\n\n")) {
      const chunk = await reader.read();
      assert.equal(chunk.done, false);
      text += new TextDecoder().decode(chunk.value);
    }
    assert.match(text, /^event: view\n/);
    controller.abort();
    await reader.cancel();
    await e.host.shutdown();
  });

  test("an unknown thread answers 404 JSON, not a stream", async () => {
    const e = await apiEngine([]);
    const response = await e.call("GET", "/threads/thread_missing/events");
    assert.equal(response.status, 404);
    assert.deepEqual(
      (await response.json() as { error: { code: string } }).error.code,
      "thread_not_found",
    );
    await e.host.shutdown();
  });
});

/** The `data:` payloads of a UI message stream, each checked against the AI SDK's chunk schema. */
const chunksOf = uiChunksOf;

const chatBody = (id: string, text: string) => ({
  id: "chat-1",
  trigger: "submit-message",
  messageId: undefined,
  messages: [
    { id: "m-0", role: "assistant", parts: [{ type: "text", text: "earlier" }] },
    {
      id,
      role: "user",
      parts: [{ type: "text", text }, { type: "file", url: "x" }, {
        type: "text",
        text: "second part",
      }],
      metadata: { client: "own field" },
    },
  ],
  clientField: { anything: true },
});

describe("chat (AI SDK UI message stream)", () => {
  test("a turn streams as start, tool, reasoning and text parts, finish, [DONE]", async () => {
    const e = await apiEngine([
      { toolCalls: [{ name: "add", arguments: { a: 2, b: 3 } }] },
      { text: "It is 5.", reasoning: "adding", delayMs: 5 },
    ]);
    const response = await e.call("POST", `/threads/${e.threadId}/chat`, {
      body: chatBody("msg-1", "2+3?"),
    });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get("x-vercel-ai-ui-message-stream"), "v1");
    assert.match(response.headers.get("content-type") ?? "", /^text\/event-stream/);
    const chunks = await chunksOf(response);
    const types = chunks.map((c) => c === "[DONE]" ? c : c.type);
    assert.equal(types[0], "start");
    assert.deepEqual(types.slice(-2), ["finish", "[DONE]"]);
    // Reasoning ends when its item settles, which may be after the text began.
    const first = (type: string) => types.indexOf(type);
    const order = [
      "start",
      "tool-input-available",
      "tool-output-available",
      "reasoning-start",
      "reasoning-delta",
      "text-start",
      "text-delta",
      "text-end",
      "finish",
      "[DONE]",
    ];
    for (let i = 1; i < order.length; i++) {
      assert.ok(first(order[i - 1]) >= 0 && first(order[i - 1]) < first(order[i]), order[i]);
    }
    assert.ok(first("reasoning-end") > first("reasoning-delta"));
    assert.ok(first("reasoning-end") < first("finish"));
    const input = chunks.find((c) => c !== "[DONE]" && c.type === "tool-input-available");
    assert.deepEqual(input, {
      type: "tool-input-available",
      toolCallId: (input as { toolCallId: string }).toolCallId,
      toolName: "add",
      input: { a: 2, b: 3 },
    });
    const output = chunks.find((c) => c !== "[DONE]" && c.type === "tool-output-available");
    assert.equal((output as { output: string }).output, "5");
    const text = chunks.filter((c) => c !== "[DONE]" && c.type === "text-delta")
      .map((c) => (c as { delta: string }).delta).join("");
    assert.equal(text, "It is 5.");
    const view = await e.threads.view(e.threadId);
    assert.equal(view.items[0].text, "2+3?\nsecond part", "user text parts joined by a line break");
    await e.host.shutdown();
  });

  test("posting the same message id again replays the committed turn without a new turn", async () => {
    const e = await apiEngine([{ text: "only answer" }]);
    const first = await chunksOf(
      await e.call("POST", `/threads/${e.threadId}/chat`, { body: chatBody("msg-1", "hi") }),
    );
    const again = await chunksOf(
      await e.call("POST", `/threads/${e.threadId}/chat`, { body: chatBody("msg-1", "hi") }),
    );
    const textOf = (chunks: typeof first) =>
      chunks.filter((c) => c !== "[DONE]" && c.type === "text-delta")
        .map((c) => (c as { delta: string }).delta).join("");
    assert.equal(textOf(first), "only answer");
    assert.equal(textOf(again), "only answer");
    assert.deepEqual(again.at(-1), "[DONE]");
    const view = await e.threads.view(e.threadId);
    assert.equal(view.turns.length, 1);
    assert.equal(e.gateway.requests.length, 1);
    // Another text under the same message id is a conflict.
    const conflict = await e.call("POST", `/threads/${e.threadId}/chat`, {
      body: chatBody("msg-1", "something else"),
    });
    assert.equal(conflict.status, 409);
    await e.host.shutdown();
  });

  test("Idempotency-Key, when sent, is the request key; a failed turn ends with an error chunk", async () => {
    const e = await apiEngine([{
      error: { status: 400, retry: "never", message: "secret prompt" },
    }]);
    const response = await e.call("POST", `/threads/${e.threadId}/chat`, {
      key: "header-key",
      body: chatBody("msg-9", "hello"),
    });
    const chunks = await chunksOf(response);
    const error = chunks.find((c) => c !== "[DONE]" && c.type === "error") as {
      errorText: string;
    };
    assert.match(error.errorText, /provider_error/);
    assert.doesNotMatch(error.errorText, /secret prompt/);
    assert.deepEqual(chunks.slice(-2).map((c) => c === "[DONE]" ? c : c.type), [
      "finish",
      "[DONE]",
    ]);
    // The header key was used: the same key with another text conflicts.
    const conflict = await e.call("POST", `/threads/${e.threadId}/messages`, {
      key: "header-key",
      body: { input: { text: "other" } },
    });
    assert.equal(conflict.status, 409);
    await e.host.shutdown();
  });

  test("a message sent while the thread runs is queued; the stream follows the turn that admits it", async () => {
    const e = await apiEngine([{ text: "first answer", delayMs: 80 }, { text: "second answer" }]);
    await e.threads.send({ threadId: e.threadId, requestKey: "a", input: { text: "one" } });
    const response = await e.call("POST", `/threads/${e.threadId}/chat`, {
      body: chatBody("msg-2", "two"),
    });
    const chunks = await chunksOf(response);
    const text = chunks.filter((c) => c !== "[DONE]" && c.type === "text-delta")
      .map((c) => (c as { delta: string }).delta).join("");
    assert.equal(text, "second answer");
    assert.deepEqual(chunks.slice(-2).map((c) => c === "[DONE]" ? c : c.type), [
      "finish",
      "[DONE]",
    ]);
    const view = await e.threads.view(e.threadId);
    assert.equal(view.turns.length, 2);
    await e.host.shutdown();
  });

  test("a chat body without user text is 400 and sends nothing", async () => {
    const e = await apiEngine([]);
    for (
      const body of [
        { messages: [] },
        { messages: [{ id: "a", role: "assistant", parts: [{ type: "text", text: "x" }] }] },
        { messages: [{ id: "a", role: "user", parts: [{ type: "file", url: "x" }] }] },
        { messages: [{ id: " ", role: "user", parts: [{ type: "text", text: "x" }] }] },
        { nothing: true },
      ]
    ) {
      const response = await e.call("POST", `/threads/${e.threadId}/chat`, { body });
      assert.equal(response.status, 400, JSON.stringify(body));
    }
    assert.ok(!e.calls.includes("send"));
    await e.host.shutdown();
  });
});
