// The chat route's third-wave points, at the protocol level (DESIGN §11 "AI
// SDK chat precise points"): regenerate, the resume route, what a client
// disconnect does, answers that do not fit, and a message while the thread
// waits. tests/ai_sdk_chat.test.ts drives the same with the AI SDK's client.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { threadApi } from "@floret/engine/http";
import { memoryStore } from "@floret/engine";
import { apiEngine } from "./support/http.ts";
import { askUser, heldTool, openOn, writeTool } from "./support/interactions.ts";
import { until } from "./support/engine.ts";
import { type Chunk, typesOf, uiChunksOf } from "./support/ui_chunks.ts";
import { serveLoopback } from "./support/http_contract_support.ts";

const user = (id: string, text: string) => ({ id, role: "user", parts: [{ type: "text", text }] });
const submit = (...messages: unknown[]) => ({ id: "chat-1", trigger: "submit-message", messages });
const textOf = (chunks: (Chunk | "[DONE]")[]): string =>
  chunks.filter((c) => c !== "[DONE]" && c.type === "text-delta")
    .map((c) => (c as Chunk).delta).join("");
const errorOf = (chunks: (Chunk | "[DONE]")[]): string | undefined =>
  (chunks.find((c) => c !== "[DONE]" && c.type === "error") as Chunk | undefined)
    ?.errorText as string | undefined;

describe("chat route: regenerate-message", () => {
  test("retries the latest (completed) turn: a new turn with a new model call, idempotent per message id", async () => {
    const e = await apiEngine([{ text: "First answer." }, { text: "Second answer." }]);
    const chat = (body: unknown, key?: string) =>
      e.call("POST", `/threads/${e.threadId}/chat`, { body, key });
    const first = await uiChunksOf(await chat(submit(user("u-1", "hi"))));
    assert.equal(textOf(first), "First answer.");
    const regenerate = {
      id: "chat-1",
      trigger: "regenerate-message",
      messageId: "a-1",
      messages: [user("u-1", "hi")],
    };
    const second = await uiChunksOf(await chat(regenerate));
    assert.equal(textOf(second), "Second answer.");
    assert.deepEqual(typesOf(second).slice(-2), ["finish", "[DONE]"]);
    let view = await e.threads.view(e.threadId);
    assert.equal(view.turns.length, 2);
    assert.equal(view.turns[1].retryOf?.mode, "regenerate");
    assert.equal(view.items.filter((i) => i.kind === "user").length, 1, "no new user item");
    assert.equal(e.gateway.requests.length, 2);
    // The same regenerate posted again: the same turn, no third model call.
    const again = await uiChunksOf(await chat(regenerate));
    assert.equal(textOf(again), "Second answer.");
    view = await e.threads.view(e.threadId);
    assert.equal(view.turns.length, 2);
    assert.equal(e.gateway.requests.length, 2);
    await e.host.shutdown();
  });

  test("the Idempotency-Key wins over the message id; nothing to retry is 409 no_retry_target", async () => {
    const e = await apiEngine([{ text: "One." }, { text: "Two." }]);
    const chat = (body: unknown, key?: string) =>
      e.call("POST", `/threads/${e.threadId}/chat`, { body, key });
    const regenerate = (messageId: string) => ({
      id: "chat-1",
      trigger: "regenerate-message",
      messageId,
      messages: [user("u-1", "hi")],
    });
    const none = await chat(regenerate("a-0"));
    assert.equal(none.status, 409);
    assert.equal((await none.json() as { error: { code: string } }).error.code, "no_retry_target");
    await uiChunksOf(await chat(submit(user("u-1", "hi"))));
    assert.equal(textOf(await uiChunksOf(await chat(regenerate("a-1"), "regen-key"))), "Two.");
    // Another message id under the same key is the same request.
    assert.equal(textOf(await uiChunksOf(await chat(regenerate("a-2"), "regen-key"))), "Two.");
    assert.equal(e.gateway.requests.length, 2);
    await e.host.shutdown();
  });
});

describe("chat route: resume (GET /threads/:threadId/chat/:chatId/stream)", () => {
  test("204 when no turn runs; a running turn streams from its start, then live, to its end", async () => {
    const held = heldTool({ name: "look", output: "found" });
    const e = await apiEngine([
      { text: "Let me look.", toolCalls: [{ name: "look", arguments: {} }] },
      { text: "Found it." },
    ], { tools: [held.tool] });
    const resume = () => e.call("GET", `/threads/${e.threadId}/chat/chat-1/stream`);
    const idle = await resume();
    assert.equal(idle.status, 204);
    assert.equal(await idle.text(), "");
    // The first stream goes away at once (its turn runs on).
    const posted = new AbortController();
    const first = await e.call("POST", `/threads/${e.threadId}/chat`, {
      body: submit(user("u-1", "look")),
      signal: posted.signal,
    });
    await held.started.promise;
    posted.abort();
    await first.body?.cancel().catch(() => {});
    const resumed = await resume();
    assert.equal(resumed.status, 200);
    assert.equal(resumed.headers.get("x-vercel-ai-ui-message-stream"), "v1");
    const reading = uiChunksOf(resumed);
    held.gate.resolve();
    const chunks = await reading;
    assert.equal(textOf(chunks), "Let me look.Found it.", "from the turn's start");
    const types = typesOf(chunks);
    assert.equal(types[0], "start");
    assert.ok(types.indexOf("tool-input-available") < types.indexOf("tool-output-available"));
    assert.deepEqual(types.slice(-2), ["finish", "[DONE]"]);
    const view = await e.threads.waitForIdle(e.threadId, { timeoutMs: 5000 });
    assert.deepEqual(view.turns.map((t) => t.outcome), ["completed"]);
    assert.equal((await resume()).status, 204, "nothing runs any more");
    await e.host.shutdown();
  });

  test("a turn waiting for an answer resumes as what it has, ending with its question", async () => {
    const e = await apiEngine([
      {
        text: "One question.",
        toolCalls: [{
          name: "ask_user",
          arguments: { questions: [{ id: "q", prompt: "Sure?" }] },
        }],
      },
    ]);
    await uiChunksOf(
      await e.call("POST", `/threads/${e.threadId}/chat`, { body: submit(user("u-1", "go")) }),
    );
    const chunks = await uiChunksOf(await e.call("GET", `/threads/${e.threadId}/chat/c/stream`));
    assert.equal(textOf(chunks), "One question.");
    const [pending] = (await e.threads.view(e.threadId)).pending;
    assert.deepEqual(chunks.at(-3), {
      type: "tool-input-available",
      toolCallId: pending.callId,
      toolName: "ask_user",
      input: { questions: pending.questions },
    });
    assert.deepEqual(typesOf(chunks).slice(-2), ["finish", "[DONE]"]);
    await e.host.shutdown();
  });

  test("after a host restart the turn is settled: 204; an unknown thread is 404", async () => {
    const store = memoryStore();
    const first = await openOn(store, [{ hang: true, text: "Partial" }]);
    const { threadId } = await first.threads.create({ requestKey: "c" });
    const app1 = threadApi(first.threads, { authorize: () => true });
    const response = await app1.request(`/threads/${threadId}/chat`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(submit(user("u-1", "go"))),
    });
    await until({ threads: first.threads, threadId } as never, (v) => v.status === "running");
    const resumedBefore = await app1.request(`/threads/${threadId}/chat/chat-1/stream`);
    assert.equal(resumedBefore.status, 200);
    await first.host.shutdown();
    await response.body?.cancel().catch(() => {});
    await resumedBefore.body?.cancel().catch(() => {});
    const second = await openOn(store, []);
    const app2 = threadApi(second.threads, { authorize: () => true });
    assert.equal((await app2.request(`/threads/${threadId}/chat/chat-1/stream`)).status, 204);
    const unknown = await app2.request(`/threads/nope/chat/chat-1/stream`);
    assert.equal(unknown.status, 404);
    await second.host.shutdown();
  });
});

describe("chat route: client disconnect", () => {
  async function disconnected(cancelOnDisconnect: boolean | undefined) {
    const held = heldTool({ name: "look", output: "found" });
    const e = await apiEngine([
      { text: "Looking.", toolCalls: [{ name: "look", arguments: {} }] },
      { text: "Done." },
    ], { tools: [held.tool] });
    const app = threadApi(e.threads, {
      authorize: () => true,
      ...(cancelOnDisconnect === undefined ? {} : { chat: { cancelOnDisconnect } }),
    });
    const controller = new AbortController();
    const response = await app.request(`/threads/${e.threadId}/chat`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(submit(user("u-1", "look"))),
      signal: controller.signal,
    });
    await held.started.promise;
    controller.abort();
    await response.body?.cancel().catch(() => {});
    return { e, held };
  }

  test("leaves the turn running by default (durable)", async () => {
    const { e, held } = await disconnected(undefined);
    held.gate.resolve();
    const view = await e.threads.waitForIdle(e.threadId, { timeoutMs: 5000 });
    assert.deepEqual(view.turns.map((t) => t.outcome), ["completed"]);
    assert.equal(view.items.at(-1)?.text, "Done.");
    await e.host.shutdown();
  });

  test("cancels the turn with chat: { cancelOnDisconnect: true }", async () => {
    const { e, held } = await disconnected(true);
    const view = await until(e, (v) => v.turns[0]?.outcome !== undefined);
    held.gate.resolve();
    assert.equal(view.turns[0].outcome, "cancelled");
    assert.equal(e.gateway.requests.length, 1, "no further model call");
    await e.host.shutdown();
  });

  test("over a real socket, a stream that ended (the turn waits for a person) is no disconnect", async () => {
    // Deno.serve aborts `request.signal` once a response has been sent in full (its legacy
    // behaviour): that abort must not cancel a turn whose stream ended because it waits.
    const e = await apiEngine([askUser([{ id: "color", prompt: "Colour?" }]), { text: "Red." }]);
    const app = threadApi(e.threads, { authorize: () => true, chat: { cancelOnDisconnect: true } });
    const server = await serveLoopback((request) => app.fetch(request));
    try {
      const response = await fetch(`${server.url}/threads/${e.threadId}/chat`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(submit(user("u-1", "pick"))),
      });
      const text = await response.text();
      assert.ok(text.includes("[DONE]"), text);
      // Give a late abort of the finished request time to reach the route.
      await new Promise((resolve) => setTimeout(resolve, 100));
      const view = await e.threads.view(e.threadId);
      assert.equal(view.status, "waiting");
      assert.equal(view.pending.length, 1);
      assert.equal(view.turns[0].outcome, undefined, "the waiting turn was not cancelled");
    } finally {
      await server.close();
      await e.host.shutdown();
    }
  });

  test("a bad chat option is refused when the app is built", () => {
    assert.throws(
      () =>
        threadApi({} as never, { authorize: () => true, chat: { cancelOnDisconnect: 1 } as never }),
      (error: { code?: string }) => error.code === "invalid_input",
    );
  });
});

describe("chat route: waits", () => {
  const askColor = askUser([{ id: "color", prompt: "Colour?", options: ["red", "blue"] }]);

  test("an ask_user output that does not fit is an error chunk, and the question still waits", async () => {
    const e = await apiEngine([askColor, { text: "Red it is." }]);
    const chat = (body: unknown) => e.call("POST", `/threads/${e.threadId}/chat`, { body });
    await uiChunksOf(await chat(submit(user("u-1", "pick"))));
    const [pending] = (await e.threads.view(e.threadId)).pending;
    const answered = (output: unknown) =>
      submit(user("u-1", "pick"), {
        id: "a-1",
        role: "assistant",
        parts: [{
          type: "tool-ask_user",
          toolCallId: pending.callId,
          state: "output-available",
          input: { questions: pending.questions },
          output,
        }],
      });
    const outputs = [{ color: "green" }, "red", { answers: [{ questionId: "color" }] }, {}];
    const refusals = [
      ...outputs.map(answered),
      // addToolOutput({ state: "output-error", errorText }) gives no answers at all.
      submit(user("u-1", "pick"), {
        id: "a-1",
        role: "assistant",
        parts: [{
          type: "tool-ask_user",
          toolCallId: pending.callId,
          state: "output-error",
          input: { questions: pending.questions },
          errorText: "the user closed the form",
        }],
      }),
    ];
    for (const body of refusals) {
      const chunks = await uiChunksOf(await chat(body));
      assert.deepEqual(typesOf(chunks), ["start", "error", "finish", "[DONE]"]);
      assert.match(errorOf(chunks)!, /^invalid_input: /);
      assert.equal((await e.threads.view(e.threadId)).status, "waiting");
    }
    const rest = await uiChunksOf(
      await chat(answered({ answers: [{ questionId: "color", value: "red" }] })),
    );
    assert.equal(textOf(rest), "Red it is.");
    assert.equal((await e.threads.view(e.threadId)).status, "idle");
    await e.host.shutdown();
  });

  test("a new message while an approval waits is an error chunk naming thread_waiting; nothing is queued", async () => {
    const ran: string[] = [];
    const e = await apiEngine([
      { toolCalls: [{ name: "write", arguments: { line: "a" } }] },
      { text: "Written." },
    ], { tools: [writeTool(ran)] });
    const chat = (body: unknown) => e.call("POST", `/threads/${e.threadId}/chat`, { body });
    await uiChunksOf(await chat(submit(user("u-1", "write a"))));
    const [pending] = (await e.threads.view(e.threadId)).pending;
    const assistant = {
      id: "a-1",
      role: "assistant",
      parts: [{
        type: "tool-write",
        toolCallId: pending.callId,
        state: "approval-requested",
        input: { line: "a" },
        approval: { id: pending.id },
      }],
    };
    const chunks = await uiChunksOf(
      await chat(submit(user("u-1", "write a"), assistant, user("u-2", "also b"))),
    );
    assert.deepEqual(typesOf(chunks), ["start", "error", "finish", "[DONE]"]);
    assert.match(errorOf(chunks)!, /^thread_waiting: .*interaction/);
    const view = await e.threads.view(e.threadId);
    assert.equal(view.status, "waiting");
    assert.equal(view.queue.length, 0);
    assert.equal(e.gateway.requests.length, 1);
    // The waiting turn's own message posted again replays it: it ends with the request.
    const replay = await uiChunksOf(await chat(submit(user("u-1", "write a"))));
    assert.ok(typesOf(replay).includes("tool-approval-request"));
    assert.equal((await e.threads.view(e.threadId)).queue.length, 0);
    await e.host.shutdown();
  });
});
