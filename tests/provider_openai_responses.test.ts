// OpenAI Responses gateway, replayed from real recordings.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { openAIResponses } from "@floret/engine/openai";
import { loadRecording, replayFetch, splitResponses } from "./support/provider_fixtures.ts";
import type { Recording, SentRequest } from "./support/provider_fixtures.ts";
import {
  assertRecordedTurn,
  basicRequest,
  type RecordedTurn,
  runGateway,
  summarize,
  violation,
} from "./support/gateway_run.ts";

const KEY = "sk-test-responses-0123456789abcdef";

function responses(recording: Recording, sent: SentRequest[] = [], model = "gpt-5") {
  return openAIResponses({ model, apiKey: KEY, fetch: replayFetch(recording, sent) });
}

interface Expected extends RecordedTurn {
  replayItems: number;
}

const cases: Record<string, Expected> = {
  "openai-responses-stream-text.sse": {
    text: "The capital of France is Paris.",
    reasoning: false,
    calls: [],
    finish: "stop",
    usage: { inputTokens: 278, outputTokens: 9, cacheReadTokens: 0, reasoningTokens: 0 },
    replayItems: 0,
  },
  "openai-responses-stream-function-call.sse": {
    text: "",
    reasoning: false,
    calls: [{ name: "get_capital", args: { country: "France" } }],
    finish: "tool_calls",
    usage: { inputTokens: 255, outputTokens: 16, cacheReadTokens: 0, reasoningTokens: 0 },
    replayItems: 0,
  },
  "openai-responses-stream-parallel-function-calls.sse": {
    text: "",
    reasoning: false,
    calls: [
      { name: "secret_retrieval_tool", args: { password: "mellon" } },
      { name: "secret_retrieval_tool", args: { password: "radiance" } },
    ],
    finish: "tool_calls",
    usage: { inputTokens: 36, outputTokens: 54, cacheReadTokens: 0, reasoningTokens: 0 },
    replayItems: 0,
  },
  "openai-responses-stream-reasoning-text-function-call.sse": {
    text: "I’ll check the capital lookup tool for “PotatoLand.”",
    reasoning: false,
    calls: [{ name: "get_capital", args: { country: "PotatoLand" } }],
    finish: "tool_calls",
    usage: { inputTokens: 63, outputTokens: 69, cacheReadTokens: 0, reasoningTokens: 26 },
    replayItems: 1,
  },
  "openai-responses-stream-reasoning-summary.sse": {
    text: "3",
    reasoning: true,
    calls: [],
    finish: "stop",
    usage: { inputTokens: 32, outputTokens: 839, cacheReadTokens: 0, reasoningTokens: 832 },
    replayItems: 0,
  },
  "openai-responses-stream-incomplete-max-output-tokens.sse": {
    text: /^Sure! Here is a list of all 50 U\.S\. states:\n\n1\. Alabama\n.*\n9\. Florida$/s,
    reasoning: false,
    calls: [],
    finish: "length",
    usage: { inputTokens: 14, outputTokens: 50, cacheReadTokens: 0, reasoningTokens: 0 },
    replayItems: 0,
  },
};

function replayItemsOf(state: unknown): { type: string; id: string; encrypted_content: string }[] {
  if (state === undefined) return [];
  return (state as { reasoning: { type: string; id: string; encrypted_content: string }[] })
    .reasoning;
}

describe("openAIResponses on recordings", () => {
  for (const [name, expected] of Object.entries(cases)) {
    test(name, async () => {
      const result = await runGateway(responses(loadRecording(name)));
      assert.equal(result.error, undefined);
      assert.equal(violation(result.events), undefined);
      const summary = summarize(result.events);
      assertRecordedTurn(summary, expected);
      const items = replayItemsOf(summary.finish?.state);
      assert.equal(items.length, expected.replayItems);
      for (const item of items) {
        assert.equal(item.type, "reasoning");
        assert.match(item.id, /^rs_/);
        assert.ok(item.encrypted_content.length > 100);
      }
      assert.deepEqual(
        JSON.parse(JSON.stringify(summary.finish?.state ?? null)),
        summary.finish?.state ?? null,
      );
    });
  }

  test("reasoning summary parts are separated by a blank line", async () => {
    const { events } = await runGateway(
      responses(loadRecording("openai-responses-stream-reasoning-summary.sse")),
    );
    const reasoning = summarize(events).reasoning;
    assert.match(reasoning, /^\*\*Exploring prime numbers\*\*\n\n/);
    assert.equal(reasoning.split(/\n\n(?=\*\*)/).length, 3);
  });

  test("request: stateless, encrypted reasoning included, tools and budget", async () => {
    const sent: SentRequest[] = [];
    await runGateway(
      responses(loadRecording("openai-responses-stream-text.sse"), sent),
      basicRequest({ maxOutputTokens: 99 }),
    );
    assert.equal(sent[0].url, "https://api.openai.com/v1/responses");
    assert.deepEqual(sent[0].body, {
      model: "gpt-5",
      input: [
        { role: "system", content: "Be brief." },
        { role: "user", content: "What is the weather in Paris?" },
      ],
      stream: true,
      store: false,
      include: ["reasoning.encrypted_content"],
      tools: [{
        type: "function",
        name: "get_weather",
        description: "Current weather for a city.",
        parameters: {
          type: "object",
          properties: { city: { type: "string" } },
          required: ["city"],
        },
        strict: false,
      }],
      max_output_tokens: 99,
    });
  });

  test("encrypted reasoning is asked for only from reasoning models", async () => {
    const include = async (model: string, reasoning?: "supported" | "unsupported") => {
      const sent: SentRequest[] = [];
      const gateway = openAIResponses({
        model,
        apiKey: KEY,
        capabilities: reasoning ? { reasoning } : undefined,
        fetch: replayFetch(loadRecording("openai-responses-stream-text.sse"), sent),
      });
      await runGateway(gateway);
      return sent[0].body.include;
    };
    assert.deepEqual(await include("o4-mini"), ["reasoning.encrypted_content"]);
    assert.deepEqual(await include("gpt-5.1-codex-max"), ["reasoning.encrypted_content"]);
    assert.equal(await include("gpt-4o"), undefined);
    assert.equal(await include("gpt-5", "unsupported"), undefined);
    assert.deepEqual(await include("my-finetune", "supported"), ["reasoning.encrypted_content"]);
  });

  test("round trip over the multi-turn recording replays the encrypted reasoning item", async () => {
    const turns = splitResponses("openai-responses-stream-reasoning-multiturn.chunks.jsonl");
    assert.equal(turns.length, 4);
    const first = summarize((await runGateway(responses(turns[0]))).events);
    assert.deepEqual(first.toolCalls.map((call) => [call.name, JSON.parse(call.arguments)]), [
      ["calculator", { a: 12, b: 7, op: "add" }],
    ]);
    assert.ok(first.reasoning.length > 0);
    const items = replayItemsOf(first.finish?.state);
    assert.equal(items.length, 1);
    const call = first.toolCalls[0];
    const sent: SentRequest[] = [];
    const followUp = basicRequest({
      messages: [
        { role: "user", text: "Compute (12 + 7) * 3 * 10." },
        {
          role: "assistant",
          text: "",
          reasoning: first.reasoning,
          toolCalls: [call],
          state: first.finish?.state,
        },
        { role: "tool", callId: call.callId, name: call.name, output: "19" },
      ],
    });
    const second = summarize((await runGateway(responses(turns[1], sent), followUp)).events);
    assert.equal(second.toolCalls[0].name, "calculator");
    assert.deepEqual(sent[0].body.input, [
      { role: "user", content: "Compute (12 + 7) * 3 * 10." },
      items[0],
      {
        type: "function_call",
        call_id: call.callId,
        name: "calculator",
        arguments: call.arguments,
      },
      { type: "function_call_output", call_id: call.callId, output: "19" },
    ]);
    // The last turn answers in text.
    const last = summarize((await runGateway(responses(turns[3]))).events);
    assert.equal(last.text, "The final result is **570**.");
    assert.equal(last.finish?.reason, "stop");
  });

  test("state from another state key is not replayed", async () => {
    const first = summarize(
      (await runGateway(
        responses(loadRecording("openai-responses-stream-reasoning-text-function-call.sse")),
      )).events,
    );
    const sent: SentRequest[] = [];
    const other = openAIResponses({
      model: "another-model",
      apiKey: KEY,
      fetch: replayFetch(loadRecording("openai-responses-stream-text.sse"), sent),
    });
    const call = first.toolCalls[0];
    await runGateway(
      other,
      basicRequest({
        messages: [
          { role: "user", text: "Capital of PotatoLand?" },
          { role: "assistant", text: first.text, toolCalls: [call], state: first.finish?.state },
          { role: "tool", callId: call.callId, name: call.name, output: "unknown" },
        ],
      }),
    );
    const input = sent[0].body.input as { type?: string }[];
    assert.ok(!input.some((item) => item.type === "reasoning"));
    assert.deepEqual(input[1], {
      role: "assistant",
      content: "I’ll check the capital lookup tool for “PotatoLand.”",
    });
  });

  test("images become input_image parts", async () => {
    const sent: SentRequest[] = [];
    const image = { type: "image", mediaType: "image/jpeg", dataBase64: "/9j/4AAQ" };
    await runGateway(
      responses(loadRecording("openai-responses-stream-text.sse"), sent),
      basicRequest({ messages: [{ role: "user", text: "Describe.", attachments: [image] }] }),
    );
    assert.deepEqual((sent[0].body.input as unknown[])[0], {
      role: "user",
      content: [
        { type: "input_text", text: "Describe." },
        { type: "input_image", image_url: "data:image/jpeg;base64,/9j/4AAQ", detail: "auto" },
      ],
    });
  });
});
