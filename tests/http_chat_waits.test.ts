// The chat route at a wait: an approval ends the stream with the AI SDK's
// `tool-approval-request`, a question with an `ask_user` tool call; a
// continuation carrying `useChat`'s approval response answers it and streams
// the rest of the turn.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { apiEngine } from "./support/http.ts";
import { askUser, writeTool } from "./support/interactions.ts";
import { type Chunk, typesOf, uiChunksOf } from "./support/ui_chunks.ts";

const userMessage = { id: "u-1", role: "user", parts: [{ type: "text", text: "write a" }] };

/** What `useChat` posts after `addToolApprovalResponse`: the assistant message last. */
const continuation = (toolCallId: string, approvalId: string, approved: boolean) => ({
  id: "chat-1",
  trigger: "submit-message",
  messages: [userMessage, {
    id: "a-1",
    role: "assistant",
    parts: [{ type: "step-start" }, {
      type: "tool-write",
      toolCallId,
      state: "approval-responded",
      input: { line: "a" },
      approval: { id: approvalId, approved },
    }],
  }],
});

const find = (chunks: (Chunk | "[DONE]")[], type: string): Chunk =>
  chunks.find((c) => c !== "[DONE]" && c.type === type) as Chunk;

describe("chat route at a wait", () => {
  test("an approval ends the stream with tool-approval-request; the approval response continues the same turn once", async () => {
    const ran: string[] = [];
    const e = await apiEngine([
      { text: "Let me write.", toolCalls: [{ name: "write", arguments: { line: "a" } }] },
      { text: "Written." },
    ], { tools: [writeTool(ran)] });
    const chat = (body: unknown) => e.call("POST", `/threads/${e.threadId}/chat`, { body });
    const first = await uiChunksOf(
      await chat({ id: "chat-1", trigger: "submit-message", messages: [userMessage] }),
    );
    const view = await e.threads.view(e.threadId);
    assert.equal(view.status, "waiting");
    const [pending] = view.pending;
    assert.deepEqual(typesOf(first).slice(-4), [
      "tool-input-available",
      "tool-approval-request",
      "finish",
      "[DONE]",
    ]);
    assert.ok(typesOf(first).indexOf("text-end") < typesOf(first).indexOf("tool-approval-request"));
    assert.deepEqual(find(first, "tool-approval-request"), {
      type: "tool-approval-request",
      approvalId: pending.id,
      toolCallId: pending.callId,
    });
    assert.deepEqual(find(first, "tool-input-available").input, { line: "a" });
    assert.deepEqual(ran, []);

    const body = continuation(pending.callId!, pending.id, true);
    const rest = await uiChunksOf(await chat(body));
    assert.deepEqual(ran, ["a"]);
    assert.equal(typesOf(rest)[0], "start");
    assert.equal(find(rest, "tool-output-available").toolCallId, pending.callId);
    assert.ok(!typesOf(rest).includes("tool-input-available"), "the client has the call already");
    const text = rest.filter((c) => c !== "[DONE]" && c.type === "text-delta")
      .map((c) => (c as Chunk).delta).join("");
    assert.equal(text, "Written.", "only what came after the approval");
    assert.deepEqual(typesOf(rest).slice(-2), ["finish", "[DONE]"]);
    const done = await e.threads.view(e.threadId);
    assert.equal(done.status, "idle");
    assert.equal(done.turns.length, 1, "the same turn went on");

    // Posting the continuation again replays: nothing runs twice.
    const again = await uiChunksOf(await chat(body));
    assert.deepEqual(typesOf(again).slice(-2), ["finish", "[DONE]"]);
    assert.deepEqual(ran, ["a"]);
    assert.equal(e.gateway.requests.length, 2);
    // The same approval answered the other way conflicts.
    const flipped = await chat(continuation(pending.callId!, pending.id, false));
    assert.equal(flipped.status, 409);
    // An approval id Floret never sent is not found, and nothing is written.
    const unknown = await chat(continuation(pending.callId!, "interaction_nope", true));
    assert.equal(unknown.status, 404);
    await e.host.shutdown();
  });

  test("a denied approval streams tool-output-denied and the model's answer", async () => {
    const ran: string[] = [];
    const e = await apiEngine([
      { toolCalls: [{ name: "write", arguments: { line: "a" } }] },
      { text: "Not written." },
    ], { tools: [writeTool(ran)] });
    const chat = (body: unknown) => e.call("POST", `/threads/${e.threadId}/chat`, { body });
    await uiChunksOf(
      await chat({ id: "chat-1", trigger: "submit-message", messages: [userMessage] }),
    );
    const [pending] = (await e.threads.view(e.threadId)).pending;
    const rest = await uiChunksOf(await chat(continuation(pending.callId!, pending.id, false)));
    assert.deepEqual(find(rest, "tool-output-denied"), {
      type: "tool-output-denied",
      toolCallId: pending.callId,
    });
    assert.ok(typesOf(rest).includes("text-delta"));
    assert.deepEqual(ran, []);
    await e.host.shutdown();
  });

  test("a question ends the stream with an ask_user tool call whose input is the questions; its tool output answers it", async () => {
    const e = await apiEngine([
      askUser([
        { id: "color", prompt: "Colour?", options: ["red", "blue"] },
        { id: "pw", prompt: "Password?", secret: true },
      ]),
      { text: "Thanks." },
    ]);
    const chat = (body: unknown) => e.call("POST", `/threads/${e.threadId}/chat`, { body });
    const chunks = await uiChunksOf(
      await chat({ id: "chat-1", trigger: "submit-message", messages: [userMessage] }),
    );
    const [pending] = (await e.threads.view(e.threadId)).pending;
    assert.equal(pending.kind, "input");
    assert.ok(pending.callId);
    assert.deepEqual(typesOf(chunks).slice(-3), ["tool-input-available", "finish", "[DONE]"]);
    assert.deepEqual(chunks.at(-3), {
      type: "tool-input-available",
      toolCallId: pending.callId,
      toolName: "ask_user",
      input: { questions: pending.questions },
    });
    assert.equal(typesOf(chunks).filter((t) => t === "tool-input-available").length, 1);
    // What `addToolOutput` leaves on the part, posted by `useChat`.
    const answered = (output: unknown) => ({
      id: "chat-1",
      trigger: "submit-message",
      messages: [userMessage, {
        id: "a-1",
        role: "assistant",
        parts: [{
          type: "tool-ask_user",
          toolCallId: pending.callId,
          state: "output-available",
          input: { questions: pending.questions },
          output,
        }],
      }],
    });
    const rest = await uiChunksOf(await chat(answered({ color: "red", pw: "s3cret" })));
    const text = rest.filter((c) => c !== "[DONE]" && c.type === "text-delta")
      .map((c) => (c as Chunk).delta).join("");
    assert.equal(text, "Thanks.");
    assert.ok(!typesOf(rest).includes("tool-output-available"), "the client has the output");
    assert.ok(!JSON.stringify(rest).includes("s3cret"));
    const done = await e.threads.view(e.threadId);
    assert.equal(done.status, "idle");
    assert.deepEqual(done.turns.map((t) => t.outcome), ["completed"]);
    // The secret answer reached the model, and was never kept in the view.
    const sent = JSON.stringify(e.gateway.requests.at(-1)!.messages);
    assert.ok(sent.includes("s3cret"));
    assert.ok(!JSON.stringify(done).includes("s3cret"));
    await e.host.shutdown();
  });
});
