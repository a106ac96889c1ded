/**
 * Part of the lifecycle suite (lifecycle_suite.ts): send and the run loop,
 * request keys, attachments.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { FloretError, type ImageAttachment } from "@floret/engine";
import { lastTurn, sendAndWait } from "./engine.ts";
import type { SuiteTools } from "./lifecycle_suite.ts";

const isCode = (code: string) => (error: unknown) =>
  error instanceof FloretError && error.code === code;

/**
 * Registers these tests.
 *
 * @param tools how the tests make an engine or wrap a service (in process or over HTTP)
 */
export function lifecycleSends({ engine, wrap }: SuiteTools): void {
  describe("send and the run loop", () => {
    test("send returns the accepted view before the model answers, then the turn completes", async () => {
      const e = await engine([{ toolCalls: [{ name: "add", arguments: { a: 2, b: 3 } }] }, {
        text: "It is 5.",
      }]);
      const sent = await e.threads.send({
        threadId: e.threadId,
        requestKey: "k1",
        input: { text: "2+3?" },
      });
      assert.equal(sent.queued, false);
      assert.equal(sent.view.status, "running");
      assert.deepEqual(sent.view.items.map((item) => [item.kind, item.text]), [["user", "2+3?"]]);
      const view = await e.threads.waitForIdle(e.threadId, { timeoutMs: 5000 });
      assert.equal(view.status, "idle");
      assert.deepEqual(view.items.map((item) => item.kind), ["user", "tool", "assistant"]);
      assert.equal(view.items[1].tool?.status, "completed");
      assert.equal(view.items[1].tool?.output, "5");
      assert.equal(view.items[2].text, "It is 5.");
      assert.deepEqual(view.items.map((item) => item.ordinal), [0, 1, 2]);
      assert.deepEqual(lastTurn(view), { outcome: "completed", code: undefined });
      assert.equal(view.turns[0].turnId, sent.turnId);
      // The tool result reached the model in the second request.
      const second = e.gateway.requests[1].messages;
      assert.deepEqual(second.at(-1), {
        role: "tool",
        callId: second.at(-2)?.role === "assistant"
          ? (second.at(-2) as { toolCalls: { callId: string }[] }).toolCalls[0].callId
          : "",
        name: "add",
        output: "5",
      });
      await e.host.shutdown();
    });

    test("item ids are stable between the live and the settled view", async () => {
      const e = await engine([{
        text: "A fairly long answer that streams in parts.",
        delayMs: 30,
      }]);
      const sent = await e.threads.send({
        threadId: e.threadId,
        requestKey: "k",
        input: { text: "hi" },
      });
      const settled = await e.threads.waitForIdle(e.threadId, { timeoutMs: 5000 });
      assert.equal(settled.items[0].id, sent.view.items[0].id);
      assert.equal(settled.items[1].live, undefined);
      await e.host.shutdown();
    });

    test("supplemental context is an ephemeral user message of its own turn only", async () => {
      const e = await engine([{ text: "one" }, { text: "two" }]);
      await e.threads.send({
        threadId: e.threadId,
        requestKey: "a",
        input: { text: "first" },
        supplementalContext: [{ title: "Open file", text: "line 1" }],
      });
      await e.threads.waitForIdle(e.threadId, { timeoutMs: 5000 });
      await sendAndWait(e, "second");
      const [first, second] = e.gateway.requests;
      assert.deepEqual(first.messages.map((m) => m.role), ["system", "user", "user"]);
      assert.match((first.messages[2] as { text: string }).text, /Open file[\s\S]*line 1/);
      assert.deepEqual(second.messages.map((m) => m.role), ["system", "user", "assistant", "user"]);
      await e.host.shutdown();
    });

    test("the request fingerprint is SHA-256 of the canonical request", async () => {
      const e = await engine([{ text: "ok" }]);
      await sendAndWait(e, "hello");
      const request = e.gateway.requests[0];
      const canonical = (value: unknown): string => {
        if (value === null || typeof value !== "object") return JSON.stringify(value);
        if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
        const record = value as Record<string, unknown>;
        return `{${
          Object.keys(record).sort().filter((k) => record[k] !== undefined).map((k) =>
            `${JSON.stringify(k)}:${canonical(record[k])}`
          ).join(",")
        }}`;
      };
      const text = canonical({
        messages: request.messages,
        tools: request.tools,
        maxOutputTokens: request.maxOutputTokens,
        state: request.state,
      });
      const digest = new Uint8Array(
        await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)),
      );
      assert.equal(
        request.fingerprint,
        [...digest].map((b) => b.toString(16).padStart(2, "0")).join(""),
      );
      await e.host.shutdown();
    });
  });

  describe("request keys", () => {
    test("a replayed send returns the committed result and runs nothing", async () => {
      const e = await engine([{ text: "once" }]);
      const first = await e.threads.send({
        threadId: e.threadId,
        requestKey: " key-1 ",
        input: { text: "hi" },
      });
      await e.threads.waitForIdle(e.threadId, { timeoutMs: 5000 });
      const again = await e.threads.send({
        threadId: e.threadId,
        requestKey: "key-1",
        input: { text: "hi" },
      });
      assert.equal(again.turnId, first.turnId);
      assert.equal(again.queued, false);
      assert.equal(e.gateway.requests.length, 1);
      assert.equal(again.view.turns.length, 1);
      await e.host.shutdown();
    });

    test("the same key with other input or another operation is request_conflict", async () => {
      const e = await engine([{ text: "once" }]);
      await sendAndWait(e, "hi", "key-1");
      await assert.rejects(
        e.threads.send({ threadId: e.threadId, requestKey: "key-1", input: { text: "other" } }),
        isCode("request_conflict"),
      );
      await assert.rejects(
        e.threads.setTitle({ threadId: e.threadId, requestKey: "key-1", title: "x" }),
        isCode("request_conflict"),
      );
      await assert.rejects(
        e.threads.create({ requestKey: "create", title: "different" }),
        isCode("request_conflict"),
      );
      await e.host.shutdown();
    });

    test("25 concurrent sends with one key admit exactly one turn", async () => {
      const e = await engine([{ text: "only one" }]);
      const results = await Promise.all(
        Array.from(
          { length: 25 },
          () => e.threads.send({ threadId: e.threadId, requestKey: "same", input: { text: "hi" } }),
        ),
      );
      assert.equal(new Set(results.map((r) => r.turnId)).size, 1);
      assert.ok(results.every((r) => !r.queued));
      const view = await e.threads.waitForIdle(e.threadId, { timeoutMs: 5000 });
      assert.equal(view.turns.length, 1);
      assert.equal(e.gateway.requests.length, 1);
      await e.host.shutdown();
    });

    test("invalid input is invalid_input and does not consume the key", async () => {
      const e = await engine([{ text: "ok" }]);
      for (const requestKey of ["", "   ", "x".repeat(257)]) {
        await assert.rejects(
          e.threads.send({ threadId: e.threadId, requestKey, input: { text: "hi" } }),
          isCode("invalid_input"),
        );
      }
      await assert.rejects(
        e.threads.send({ threadId: e.threadId, requestKey: "k", input: { text: "" } }),
        isCode("invalid_input"),
      );
      await assert.rejects(
        e.threads.send({
          threadId: e.threadId,
          requestKey: "k",
          // Not an ImageAttachment: the cast lets the test send what a JavaScript host could.
          input: { text: "x", attachments: [{ type: "pdf" } as unknown as ImageAttachment] },
        }),
        isCode("invalid_input"),
      );
      const ok = await e.threads.send({
        threadId: e.threadId,
        requestKey: "k",
        input: { text: "fine" },
      });
      assert.equal(ok.queued, false);
      await e.threads.waitForIdle(e.threadId, { timeoutMs: 5000 });
      await e.host.shutdown();
    });

    test("respond to an id that names no interaction: interaction_not_found", async () => {
      const e = await engine([]);
      await assert.rejects(
        e.threads.respond({
          threadId: e.threadId,
          requestKey: "r",
          interactionId: "int_x",
          decision: "approve",
        }),
        isCode("interaction_not_found"),
      );
      await e.host.shutdown();
    });

    test("any id that names no thread is thread_not_found", async () => {
      const e = await engine([]);
      for (const threadId of ["thread_nope", "", 42 as unknown as string]) {
        await assert.rejects(e.threads.view(threadId), isCode("thread_not_found"));
        await assert.rejects(
          e.threads.send({ threadId, requestKey: "k", input: { text: "x" } }),
          isCode("thread_not_found"),
        );
      }
      await e.host.shutdown();
    });
  });

  describe("attachments", () => {
    const image: ImageAttachment = {
      type: "image",
      mediaType: "image/png",
      dataBase64: "iVBORw0KGgo=",
    };

    test("image attachments reach the gateway on the user message", async () => {
      const e = await engine([{ text: "a picture" }]);
      await e.threads.send({
        threadId: e.threadId,
        requestKey: "img",
        input: { text: "what is this?", attachments: [image] },
      });
      await e.threads.waitForIdle(e.threadId, { timeoutMs: 5000 });
      assert.deepEqual(e.gateway.requests[0].messages[1], {
        role: "user",
        text: "what is this?",
        attachments: [image],
      });
      await e.host.shutdown();
    });

    test("a model without image support refuses attachments with invalid_input, consuming nothing", async () => {
      const { defineAgent, memoryStore, openHost } = await import("@floret/engine");
      const { scriptedGateway } = await import("@floret/engine/testing");
      const gateway = scriptedGateway([{ text: "text only" }], {
        capabilities: { images: false },
      });
      const host = await openHost({ store: memoryStore() });
      const threads = wrap(
        host.threads({ agent: defineAgent({ id: "a", systemPrompt: "s", gateway }) }),
      );
      const { threadId } = await threads.create({ requestKey: "c" });
      await assert.rejects(
        threads.send({ threadId, requestKey: "k", input: { text: "look", attachments: [image] } }),
        isCode("invalid_input"),
      );
      const ok = await threads.send({
        threadId,
        requestKey: "k",
        input: { text: "no picture then" },
      });
      assert.equal(ok.queued, false);
      await threads.waitForIdle(threadId, { timeoutMs: 5000 });
      assert.equal(gateway.requests.length, 1);
      await host.shutdown();
    });
  });
}
