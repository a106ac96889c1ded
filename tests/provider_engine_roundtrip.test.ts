// The HTTP gateways under the real engine: a whole tool-using turn replayed
// from recordings, checking that the follow-up request carries the tool
// result and the opaque reasoning state the engine kept.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import { defineAgent, defineTool, memoryStore, openHost } from "@floret/engine";
import type { Gateway } from "@floret/engine";
import { openAIChat, openAIResponses } from "@floret/engine/openai";
import { anthropicMessages } from "@floret/engine/anthropic";
import { loadRecording, replayFetch, splitResponses } from "./support/provider_fixtures.ts";
import type { Recording, SentRequest } from "./support/provider_fixtures.ts";

/** A fetch that answers the n-th request with the n-th recording. */
function sequence(recordings: Recording[], sent: SentRequest[]): typeof globalThis.fetch {
  let next = 0;
  return ((input: string | URL | Request, init?: RequestInit) => {
    const recording = recordings[Math.min(next++, recordings.length - 1)];
    return replayFetch(recording, sent)(input, init);
  }) as typeof globalThis.fetch;
}

async function runTurn(gateway: Gateway, tool: ReturnType<typeof defineTool>, text: string) {
  const host = await openHost({ store: memoryStore() });
  try {
    const threads = host.threads({
      agent: defineAgent({ id: "agent", systemPrompt: "Be brief.", gateway, tools: [tool] }),
    });
    const { threadId } = await threads.create({ requestKey: "create" });
    await threads.send({ threadId, requestKey: "send", input: { text } });
    return await threads.waitForIdle(threadId, { timeoutMs: 20_000 });
  } finally {
    await host.shutdown();
  }
}

describe("gateways under the engine", () => {
  test("openAIChat: tool call, result, answer", async () => {
    const sent: SentRequest[] = [];
    const fetch = sequence([
      loadRecording("openai-chat-stream-tool-call-fragmented.sse"),
      loadRecording("openai-chat-stream-text-after-tool.sse"),
    ], sent);
    const capital = defineTool({
      name: "get_capital",
      description: "Capital of a country.",
      input: z.object({ country: z.string() }),
      effect: "read",
      execute: () => "London",
    });
    const view = await runTurn(
      openAIChat({ model: "gpt-4o-mini", apiKey: "sk-x-123456", fetch }),
      capital,
      "UK?",
    );
    assert.equal(view.turns.at(-1)?.outcome, "completed");
    assert.equal(view.items.at(-1)?.text, "The capital of the UK is London.");
    assert.equal(sent.length, 2);
    const messages = sent[1].body.messages as {
      role: string;
      tool_call_id?: string;
      content?: unknown;
    }[];
    assert.deepEqual(messages.at(-1), {
      role: "tool",
      tool_call_id: "call_ZR5UUuTt3pf61kjwAJIYdVMj",
      content: "London",
    });
  });

  test("openAIResponses: four steps, encrypted reasoning replayed", async () => {
    const sent: SentRequest[] = [];
    const fetch = sequence(
      splitResponses("openai-responses-stream-reasoning-multiturn.chunks.jsonl"),
      sent,
    );
    const calculator = defineTool({
      name: "calculator",
      description: "Arithmetic.",
      input: z.object({
        a: z.number(),
        b: z.number(),
        op: z.enum(["add", "subtract", "multiply", "divide"]),
      }),
      effect: "none",
      execute: ({ a, b, op }) =>
        String(
          op === "add" ? a + b : op === "subtract" ? a - b : op === "multiply" ? a * b : a / b,
        ),
    });
    const gateway = openAIResponses({ model: "gpt-5.1-codex-max", apiKey: "sk-x-123456", fetch });
    const view = await runTurn(gateway, calculator, "(12 + 7) * 3 * 10?");
    assert.equal(view.turns.at(-1)?.outcome, "completed");
    assert.equal(view.items.at(-1)?.text, "The final result is **570**.");
    assert.equal(sent.length, 4);
    const input = sent[1].body.input as {
      type?: string;
      encrypted_content?: string;
      output?: string;
    }[];
    const reasoning = input.findIndex((item) => item.type === "reasoning");
    const call = input.findIndex((item) => item.type === "function_call");
    assert.ok(
      reasoning >= 0 && reasoning < call,
      "reasoning item replayed before its function call",
    );
    assert.ok((input[reasoning].encrypted_content ?? "").length > 100);
    assert.equal(input.find((item) => item.type === "function_call_output")?.output, "19");
  });

  test("anthropicMessages: signed thinking replayed before tool_use", async () => {
    const sent: SentRequest[] = [];
    const fetch = sequence([
      loadRecording("anthropic-stream-thinking-tool-use.sse"),
      loadRecording("anthropic-stream-thinking-text.sse"),
    ], sent);
    const version = defineTool({
      name: "fixed_version",
      description: "The fixed version.",
      input: z.object({}),
      effect: "read",
      execute: () => "1.2.3",
    });
    const gateway = anthropicMessages({
      model: "claude-haiku-4-5",
      apiKey: "sk-ant-x-123456",
      fetch,
    });
    const view = await runTurn(gateway, version, "Use the tool.");
    assert.equal(view.turns.at(-1)?.outcome, "completed");
    assert.equal(view.items.at(-1)?.text, "- Captain\n- Scoop");
    const assistant = (sent[1].body.messages as {
      role: string;
      content: { type: string; signature?: string }[];
    }[])[1];
    assert.equal(assistant.role, "assistant");
    assert.deepEqual(assistant.content.map((block) => block.type), ["thinking", "tool_use"]);
    assert.ok(assistant.content[0].signature?.startsWith("EoQDCm0I"));
  });
});
