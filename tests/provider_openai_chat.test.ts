// OpenAI Chat Completions gateway, replayed from real recordings.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { FloretError, ProviderError } from "@floret/engine";
import { openAIChat } from "@floret/engine/openai";
import { loadRecording, replayFetch } from "./support/provider_fixtures.ts";
import type { SentRequest } from "./support/provider_fixtures.ts";
import {
  assertRecordedTurn,
  basicRequest,
  type RecordedTurn,
  runGateway,
  summarize,
  violation,
} from "./support/gateway_run.ts";

const KEY = "sk-test-chat-0123456789abcdef";

function chat(name: string, sent: SentRequest[] = [], provider?: string) {
  return openAIChat({
    model: "gpt-4o-mini",
    apiKey: KEY,
    provider,
    fetch: replayFetch(loadRecording(name), sent),
  });
}

interface Expected extends RecordedTurn {
  provider?: string;
}

const cases: Record<string, Expected> = {
  "openai-chat-stream-text-usage.sse": {
    text: "The capital of Mexico is Mexico City.",
    reasoning: false,
    calls: [],
    finish: "stop",
    usage: { inputTokens: 14, outputTokens: 8, cacheReadTokens: 0, reasoningTokens: 0 },
  },
  "openai-chat-stream-tool-call-fragmented.sse": {
    text: "",
    reasoning: false,
    calls: [{ name: "get_capital", args: { country: "UK" } }],
    finish: "tool_calls",
    usage: { inputTokens: 53, outputTokens: 15, cacheReadTokens: 0, reasoningTokens: 0 },
  },
  "openai-chat-stream-text-after-tool.sse": {
    text: "The capital of the UK is London.",
    reasoning: false,
    calls: [],
    finish: "stop",
    usage: { inputTokens: 78, outputTokens: 9, cacheReadTokens: 0, reasoningTokens: 0 },
  },
  "openai-chat-stream-parallel-tool-calls.sse": {
    text: "",
    reasoning: false,
    calls: [
      { name: "secret_retrieval_tool", args: { password: "mellon" } },
      { name: "secret_retrieval_tool", args: { password: "radiance" } },
    ],
    finish: "tool_calls",
    usage: { inputTokens: 75, outputTokens: 53, cacheReadTokens: 0, reasoningTokens: 0 },
  },
  "openai-chat-stream-parallel-tool-calls-b.sse": {
    text: "",
    reasoning: false,
    calls: [
      { name: "get_weather", args: { city: "Mexico City" } },
      { name: "get_product_name", args: {} },
    ],
    finish: "tool_calls",
    usage: { inputTokens: 417, outputTokens: 44, cacheReadTokens: 0, reasoningTokens: 0 },
  },
  "openai-chat-stream-finish-length.sse": {
    text:
      /^Here is a list of all 50 U\.S\. states:\n\n1\. Alabama\n2\. Alaska\n3\. Arizona\n.*\n9\. Florida\n10$/s,
    reasoning: false,
    calls: [],
    finish: "length",
    usage: { inputTokens: 14, outputTokens: 50, cacheReadTokens: 0, reasoningTokens: 0 },
  },
  "openai-chat-stream-finish-length-no-content.sse": {
    text: "",
    reasoning: false,
    calls: [],
    finish: "length",
    usage: { inputTokens: 12, outputTokens: 100, cacheReadTokens: 0, reasoningTokens: 100 },
  },
  "openai-chat-nonstream-tool-calls.json": {
    text: "",
    reasoning: false,
    calls: [{ name: "lookup_population", args: { country: "Crumpet" } }],
    finish: "tool_calls",
    usage: { inputTokens: 92, outputTokens: 17, cacheReadTokens: 0, reasoningTokens: 0 },
  },
  "openai-chat-nonstream-parallel-tool-calls.json": {
    text: "",
    reasoning: false,
    calls: [
      { name: "secret_retrieval_tool", args: { password: "mellon" } },
      { name: "secret_retrieval_tool", args: { password: "radiance" } },
    ],
    finish: "tool_calls",
    usage: { inputTokens: 75, outputTokens: 53, cacheReadTokens: 0, reasoningTokens: 0 },
  },
  "deepseek-stream-reasoning-content.sse": {
    text: "Hello there! 😊 How can I help you today?",
    reasoning: true,
    calls: [],
    finish: "stop",
    usage: { inputTokens: 6, outputTokens: 212, cacheReadTokens: 0, reasoningTokens: 198 },
    provider: "deepseek",
  },
  "deepseek-stream-reasoning-tool-call.chunks.jsonl": {
    text: "",
    reasoning: true,
    calls: [{ name: "weather", args: { location: "San Francisco" } }],
    finish: "tool_calls",
    // prompt_tokens 339 includes 320 cache hits: the input is the 19 misses.
    usage: { inputTokens: 19, outputTokens: 83, cacheReadTokens: 320, reasoningTokens: 39 },
    provider: "deepseek",
  },
};

describe("openAIChat on recordings", () => {
  for (const [name, expected] of Object.entries(cases)) {
    test(name, async () => {
      const result = await runGateway(chat(name, [], expected.provider));
      assert.equal(result.error, undefined);
      assert.equal(violation(result.events), undefined);
      const summary = summarize(result.events);
      assertRecordedTurn(summary, expected);
      assert.equal(summary.finish?.state, undefined);
    });
  }

  test("DeepSeek reasoning streams before the answer", async () => {
    const { events } = await runGateway(
      chat("deepseek-stream-reasoning-content.sse", [], "deepseek"),
    );
    const firstText = events.findIndex((event) => event.type === "text");
    const lastReasoning = events.findLastIndex((event) => event.type === "reasoning");
    assert.ok(lastReasoning < firstText);
    assert.match(summarize(events).reasoning, /^Hmm, the user just said "Hello"\./);
  });

  test("OpenRouter: comment lines are skipped and the in-stream error fails the attempt", async () => {
    const result = await runGateway(
      chat("openrouter-chat-stream-length-then-error.sse", [], "openrouter"),
    );
    assert.ok(result.error instanceof ProviderError, String(result.error));
    assert.equal(result.error.status, undefined);
    assert.equal(result.error.providerCode, "400");
    assert.equal(result.error.retry, "never");
    assert.match(result.error.message, /Token limit reached/);
    // The reasoning that streamed before the error was delivered; no finish was.
    assert.ok(summarize(result.events).reasoning.length > 0);
    assert.ok(!result.events.some((event) => event.type === "finish"));
  });

  test("request: stream with usage, tools, budget, headers and baseURL", async () => {
    const sent: SentRequest[] = [];
    const gateway = openAIChat({
      model: "gpt-4o-mini",
      apiKey: KEY,
      baseURL: "https://proxy.example/v1",
      headers: { "x-team": "floret" },
      fetch: replayFetch(loadRecording("openai-chat-stream-text-usage.sse"), sent),
    });
    await runGateway(gateway, basicRequest({ maxOutputTokens: 321 }));
    assert.equal(sent.length, 1);
    assert.equal(sent[0].url, "https://proxy.example/v1/chat/completions");
    assert.equal(sent[0].headers.authorization, `Bearer ${KEY}`);
    assert.equal(sent[0].headers["x-team"], "floret");
    assert.deepEqual(sent[0].body, {
      model: "gpt-4o-mini",
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: "What is the weather in Paris?" },
      ],
      stream: true,
      stream_options: { include_usage: true },
      tools: [{
        type: "function",
        function: {
          name: "get_weather",
          description: "Current weather for a city.",
          parameters: {
            type: "object",
            properties: { city: { type: "string" } },
            required: ["city"],
          },
        },
      }],
      max_completion_tokens: 321,
    });
  });

  test("extraBody adds fields but never overrides what the gateway renders", async () => {
    const sent: SentRequest[] = [];
    const gateway = openAIChat({
      model: "gpt-4o-mini",
      apiKey: KEY,
      extraBody: { temperature: 0.2, model: "other", stream: false },
      fetch: replayFetch(loadRecording("openai-chat-stream-text-usage.sse"), sent),
    });
    await runGateway(gateway);
    assert.equal(sent[0].body.temperature, 0.2);
    assert.equal(sent[0].body.model, "gpt-4o-mini");
    assert.equal(sent[0].body.stream, true);
  });

  test("compatible providers get max_tokens; DeepSeek gets its reasoning back in a tool loop", async () => {
    const sent: SentRequest[] = [];
    const request = basicRequest({
      maxOutputTokens: 50,
      messages: [
        { role: "user", text: "Weather?" },
        {
          role: "assistant",
          text: "",
          reasoning: "Need the tool.",
          toolCalls: [{ callId: "call_1", name: "get_weather", arguments: '{"city":"Paris"}' }],
        },
        { role: "tool", callId: "call_1", name: "get_weather", output: "sunny" },
      ],
    });
    await runGateway(chat("deepseek-stream-reasoning-content.sse", sent, "deepseek"), request);
    assert.equal(sent[0].body.max_tokens, 50);
    assert.equal(sent[0].body.max_completion_tokens, undefined);
    assert.deepEqual((sent[0].body.messages as unknown[])[1], {
      role: "assistant",
      content: null,
      reasoning_content: "Need the tool.",
      tool_calls: [{
        id: "call_1",
        type: "function",
        function: { name: "get_weather", arguments: '{"city":"Paris"}' },
      }],
    });
  });

  test("round trip: the follow-up after a tool call carries the call and its result", async () => {
    const first = await runGateway(chat("openai-chat-stream-tool-call-fragmented.sse"));
    const call = summarize(first.events).toolCalls[0];
    const sent: SentRequest[] = [];
    const followUp = basicRequest({
      messages: [
        { role: "user", text: "What is the capital of the UK?" },
        { role: "assistant", text: "", toolCalls: [call] },
        { role: "tool", callId: call.callId, name: call.name, output: "London" },
      ],
    });
    const second = await runGateway(chat("openai-chat-stream-text-after-tool.sse", sent), followUp);
    assert.equal(summarize(second.events).text, "The capital of the UK is London.");
    assert.deepEqual(sent[0].body.messages, [
      { role: "user", content: "What is the capital of the UK?" },
      {
        role: "assistant",
        content: null,
        tool_calls: [{
          id: "call_ZR5UUuTt3pf61kjwAJIYdVMj",
          type: "function",
          function: { name: "get_capital", arguments: '{"country":"UK"}' },
        }],
      },
      { role: "tool", tool_call_id: "call_ZR5UUuTt3pf61kjwAJIYdVMj", content: "London" },
    ]);
  });

  test("images become image_url parts; a model without images rejects them before any I/O", async () => {
    const image = { type: "image", mediaType: "image/png", dataBase64: "iVBORw0KGgo=" };
    const request = basicRequest({
      messages: [{ role: "user", text: "What is this?", attachments: [image] }],
    });
    const sent: SentRequest[] = [];
    await runGateway(chat("openai-chat-stream-text-usage.sse", sent), request);
    assert.deepEqual((sent[0].body.messages as unknown[])[0], {
      role: "user",
      content: [
        { type: "text", text: "What is this?" },
        { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } },
      ],
    });
    const blind: SentRequest[] = [];
    const gateway = openAIChat({
      model: "m",
      apiKey: KEY,
      capabilities: { images: false },
      fetch: replayFetch(loadRecording("openai-chat-stream-text-usage.sse"), blind),
    });
    const result = await runGateway(gateway, request);
    assert.ok(result.error instanceof FloretError && result.error.code === "invalid_input");
    assert.equal(blind.length, 0);
  });
});

test("openAIChat validates options and derives the state key", () => {
  assert.throws(() => openAIChat({ model: "" }), (error) => error instanceof FloretError);
  assert.throws(
    () => openAIChat({ model: "m", baseURL: "not a url" }),
    (error) => error instanceof FloretError,
  );
  const gateway = openAIChat({ model: "deepseek-reasoner", provider: "deepseek", apiKey: KEY });
  assert.equal(gateway.info.stateKey, "deepseek:deepseek-reasoner:chat");
  assert.equal(openAIChat({ model: "m", stateKey: "mine", apiKey: KEY }).info.stateKey, "mine");
});
