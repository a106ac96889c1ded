// The chat route driven by the AI SDK's own client (`ai@7`: AbstractChat, the
// chat behind `useChat`, over DefaultChatTransport), in-process through a
// custom fetch to `app.request`: text, regenerate, approvals, ask_user
// answered with addToolOutput, a message while the thread waits, resume, and
// stop. `ai` comes from tests/ai_sdk's own package (see tests/ai_sdk/chat.ts).
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { threadApi } from "@floret/engine/http";
import { apiEngine } from "./support/http.ts";
import { askUser, heldTool, writeTool } from "./support/interactions.ts";
import { until } from "./support/engine.ts";
import {
  floretTransport,
  lastAssistantMessageIsCompleteWithApprovalResponses,
  lastAssistantMessageIsCompleteWithToolCalls,
  TestChat,
  type UIMessage,
} from "./ai_sdk/chat.ts";

type Part = UIMessage["parts"][number] & Record<string, unknown>;
const textOf = (message: UIMessage | undefined): string =>
  (message?.parts ?? []).filter((p) => p.type === "text").map((p) => (p as { text: string }).text)
    .join("");
const toolPart = (chat: TestChat, type: string): Part =>
  chat.messages.at(-1)!.parts.find((p) => p.type === type) as Part;

/** `useChat`'s usual automatic send: after every approval answered or every tool output given. */
const sendAutomaticallyWhen = (options: { messages: UIMessage[] }): boolean =>
  lastAssistantMessageIsCompleteWithApprovalResponses(options) ||
  lastAssistantMessageIsCompleteWithToolCalls(options);

describe("the AI SDK's chat client against the chat route", () => {
  test("a message streams the answer; regenerate() makes a new turn with a new model call", async () => {
    const e = await apiEngine([{ text: "First." }, { text: "Second." }]);
    const chat = new TestChat({ id: "c1", transport: floretTransport(e.app, e.threadId) });
    await chat.sendMessage({ text: "hi" });
    assert.equal(chat.status, "ready");
    assert.deepEqual(chat.messages.map((m) => m.role), ["user", "assistant"]);
    assert.equal(textOf(chat.messages[1]), "First.");
    await chat.regenerate();
    assert.equal(chat.status, "ready", String(chat.error));
    assert.deepEqual(chat.messages.map((m) => m.role), ["user", "assistant"]);
    assert.equal(textOf(chat.messages[1]), "Second.");
    assert.equal(e.gateway.requests.length, 2);
    const view = await e.threads.view(e.threadId);
    assert.equal(view.turns.length, 2);
    assert.equal(view.turns[1].retryOf?.mode, "regenerate");
    await e.host.shutdown();
  });

  test("a tool the server ran does not make the chat post again (its answer is a step of its own)", async () => {
    const e = await apiEngine([
      { text: "Adding.", toolCalls: [{ name: "add", arguments: { a: 1, b: 2 } }] },
      { text: "It is 3." },
    ]);
    const chat = new TestChat({
      id: "c1",
      transport: floretTransport(e.app, e.threadId),
      sendAutomaticallyWhen,
    });
    await chat.sendMessage({ text: "1+2?" });
    assert.equal(await chat.settled(), "ready", String(chat.error));
    // Give an automatic send the chance to start, were one due.
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(await chat.settled(), "ready");
    assert.deepEqual(chat.messages.map((m) => m.role), ["user", "assistant"]);
    const types = chat.messages[1].parts.map((p) => p.type);
    assert.deepEqual(types, ["text", "tool-add", "step-start", "text"]);
    assert.equal(textOf(chat.messages[1]), "Adding.It is 3.");
    assert.equal(e.gateway.requests.length, 2);
    await e.host.shutdown();
  });

  test("an approval: addToolApprovalResponse continues the same turn", async () => {
    const ran: string[] = [];
    const e = await apiEngine([
      { toolCalls: [{ name: "write", arguments: { line: "a" } }] },
      { text: "Written." },
    ], { tools: [writeTool(ran)] });
    const chat = new TestChat({
      id: "c1",
      transport: floretTransport(e.app, e.threadId),
      sendAutomaticallyWhen,
    });
    await chat.sendMessage({ text: "write a" });
    const part = toolPart(chat, "tool-write");
    assert.equal(part.state, "approval-requested");
    await chat.addToolApprovalResponse({
      id: (part.approval as { id: string }).id,
      approved: true,
    });
    assert.equal(await chat.settled(), "ready", String(chat.error));
    assert.deepEqual(ran, ["a"]);
    assert.equal(toolPart(chat, "tool-write").state, "output-available");
    assert.match(textOf(chat.messages.at(-1)), /Written\.$/);
    assert.equal((await e.threads.view(e.threadId)).turns.length, 1);
    await e.host.shutdown();
  });

  test("ask_user is a tool part that addToolOutput answers, secrets included", async () => {
    const e = await apiEngine([
      askUser([
        { id: "color", prompt: "Colour?", options: ["red", "blue"] },
        { id: "pw", prompt: "Password?", secret: true },
      ]),
      { text: "Thanks." },
    ]);
    const chat = new TestChat({
      id: "c1",
      transport: floretTransport(e.app, e.threadId),
      sendAutomaticallyWhen,
    });
    await chat.sendMessage({ text: "set me up" });
    assert.equal(chat.status, "ready");
    const part = toolPart(chat, "tool-ask_user");
    assert.equal(part.state, "input-available");
    const [pending] = (await e.threads.view(e.threadId)).pending;
    assert.deepEqual(part.input, { questions: pending.questions });
    assert.equal(part.toolCallId, pending.callId);
    await chat.addToolOutput({
      tool: "ask_user",
      toolCallId: part.toolCallId as string,
      output: { color: "red", pw: "s3cret" },
    });
    assert.equal(await chat.settled(), "ready", String(chat.error));
    assert.match(textOf(chat.messages.at(-1)), /Thanks\.$/);
    const view = await e.threads.view(e.threadId);
    assert.equal(view.status, "idle");
    assert.ok(JSON.stringify(e.gateway.requests.at(-1)!.messages).includes("s3cret"));
    assert.ok(!JSON.stringify(view).includes("s3cret"));
    await e.host.shutdown();
  });

  test("an answer that does not fit, or a new message while the thread waits, is the chat's error (never stuck in submitted)", async () => {
    const e = await apiEngine([
      askUser([{ id: "color", prompt: "Colour?", options: ["red", "blue"] }]),
      { text: "Thanks." },
    ]);
    const chat = new TestChat({
      id: "c1",
      transport: floretTransport(e.app, e.threadId),
      sendAutomaticallyWhen,
    });
    await chat.sendMessage({ text: "pick" });
    const part = toolPart(chat, "tool-ask_user");
    await chat.sendMessage({ text: "never mind" });
    assert.equal(await chat.settled(), "error");
    assert.match(chat.error!.message, /thread_waiting/);
    assert.equal((await e.threads.view(e.threadId)).queue.length, 0);
    chat.clearError();
    // Drop the refused message, as a UI would, then answer with an option not offered.
    chat.messages = chat.messages.slice(0, 2);
    await chat.addToolOutput({
      tool: "ask_user",
      toolCallId: part.toolCallId as string,
      output: { color: "green" },
    });
    assert.equal(await chat.settled(), "error");
    assert.match(chat.error!.message, /invalid_input/);
    assert.equal((await e.threads.view(e.threadId)).status, "waiting");
    await e.host.shutdown();
  });

  test("resumeStream() after a reload: the running turn from its start, then live; nothing when idle", async () => {
    const held = heldTool({ name: "look", output: "found" });
    const e = await apiEngine([
      { text: "Let me look.", toolCalls: [{ name: "look", arguments: {} }] },
      { text: "Found it." },
    ], { tools: [held.tool] });
    const idleChat = new TestChat({ id: "c0", transport: floretTransport(e.app, e.threadId) });
    await idleChat.resumeStream();
    assert.equal(idleChat.status, "ready");
    assert.equal(idleChat.messages.length, 0, "204: nothing to resume");

    const first = new TestChat({ id: "c1", transport: floretTransport(e.app, e.threadId) });
    const sending = first.sendMessage({ text: "look" });
    await held.started.promise;
    await first.stop();
    await sending;
    // A reloaded page: the user message from storage, the answer still running.
    const reloaded = new TestChat({
      id: "c1",
      transport: floretTransport(e.app, e.threadId),
      messages: first.messages.filter((m) => m.role === "user"),
    });
    const resuming = reloaded.resumeStream();
    await until(e, () => reloaded.status === "streaming");
    held.gate.resolve();
    await resuming;
    assert.equal(await reloaded.settled(), "ready", String(reloaded.error));
    assert.deepEqual(reloaded.messages.map((m) => m.role), ["user", "assistant"]);
    assert.equal(textOf(reloaded.messages[1]), "Let me look.Found it.");
    assert.equal(toolPart(reloaded, "tool-look").state, "output-available");
    await e.host.shutdown();
  });

  test("stop() leaves the turn running by default; with cancelOnDisconnect it cancels it", async () => {
    for (const cancelOnDisconnect of [false, true]) {
      const held = heldTool({ name: "look", output: "found" });
      const e = await apiEngine([
        { text: "Looking.", toolCalls: [{ name: "look", arguments: {} }] },
        { text: "Done." },
      ], { tools: [held.tool] });
      const app = threadApi(e.threads, { authorize: () => true, chat: { cancelOnDisconnect } });
      const chat = new TestChat({ id: "c1", transport: floretTransport(app, e.threadId) });
      const sending = chat.sendMessage({ text: "look" });
      await held.started.promise;
      await chat.stop();
      await sending;
      assert.equal(chat.status, "ready");
      if (cancelOnDisconnect) {
        const view = await until(e, (v) => v.turns[0]?.outcome !== undefined);
        assert.equal(view.turns[0].outcome, "cancelled");
        held.gate.resolve();
      } else {
        held.gate.resolve();
        const view = await e.threads.waitForIdle(e.threadId, { timeoutMs: 5000 });
        assert.equal(view.turns[0].outcome, "completed");
        assert.equal(view.items.at(-1)?.text, "Done.");
      }
      await e.host.shutdown();
    }
  });
});
