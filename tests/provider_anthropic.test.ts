// Anthropic Messages gateway, replayed from real recordings.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { FloretError } from "@floret/engine";
import { anthropicMessages } from "@floret/engine/anthropic";
import { loadRecording, replayFetch } from "./support/provider_fixtures.ts";
import type { SentRequest } from "./support/provider_fixtures.ts";
import { basicRequest, runGateway, summarize, violation } from "./support/gateway_run.ts";

const KEY = "sk-ant-test-0123456789abcdef";

function messages(
  name: string,
  sent: SentRequest[] = [],
  maxTokens?: number,
  promptCache?: boolean,
) {
  return anthropicMessages({
    model: "claude-sonnet-5-5",
    apiKey: KEY,
    maxTokens,
    promptCache,
    fetch: replayFetch(loadRecording(name), sent),
  });
}

const EPHEMERAL = { type: "ephemeral" };

interface Expected {
  text: string | RegExp;
  reasoning: RegExp | false;
  calls: { name: string; args: unknown }[];
  finish: string;
  usage: Record<string, number>;
  signed: number;
}

const cases: Record<string, Expected> = {
  "anthropic-stream-parallel-tool-use.sse": {
    text: "I'll retrieve the secrets for both passwords you provided.",
    reasoning: false,
    calls: [
      { name: "secret_retrieval_tool", args: { password: "mellon" } },
      { name: "secret_retrieval_tool", args: { password: "radiance" } },
    ],
    finish: "tool_calls",
    usage: { inputTokens: 416, outputTokens: 109, cacheReadTokens: 0, cacheWriteTokens: 0 },
    signed: 0,
  },
  "anthropic-stream-thinking-tool-use.sse": {
    text: "",
    reasoning: /^The user wants me to:\n1/,
    // The tool takes no parameters: its only input_json_delta is "".
    calls: [{ name: "fixed_version", args: "" }],
    finish: "tool_calls",
    usage: {
      inputTokens: 598,
      outputTokens: 92,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
      reasoningTokens: 53,
    },
    signed: 1,
  },
  "anthropic-stream-thinking-text.sse": {
    text: "- Captain\n- Scoop",
    reasoning: /^The user wants two names for a pet pelic/,
    calls: [],
    finish: "stop",
    usage: { inputTokens: 46, outputTokens: 84, cacheReadTokens: 0, cacheWriteTokens: 0 },
    signed: 1,
  },
  "anthropic-stream-thinking-server-tool.sse": {
    // Two text blocks around the server tool; the code execution blocks are skipped.
    text:
      /^I'll calculate that expression for you right away!Following the standard \*\*order of operations/,
    reasoning: /^Let me calculate this mathematical expre/,
    calls: [],
    finish: "stop",
    usage: { inputTokens: 4714, outputTokens: 304, cacheReadTokens: 0, cacheWriteTokens: 0 },
    signed: 1,
  },
  "anthropic-stream-max-tokens.sse": {
    text:
      /^Here are all 50 U\.S\. states in alphabetical order:\n\n1\. Alabama\n.*\n8\. Delaware\n9$/s,
    reasoning: false,
    calls: [],
    finish: "length",
    usage: { inputTokens: 15, outputTokens: 50, cacheReadTokens: 0, cacheWriteTokens: 0 },
    signed: 0,
  },
};

interface ThinkingState {
  thinking: { type: string; thinking: string; signature: string }[];
}

describe("anthropicMessages on recordings", () => {
  for (const [name, expected] of Object.entries(cases)) {
    test(name, async () => {
      const result = await runGateway(messages(name));
      assert.equal(result.error, undefined);
      assert.equal(violation(result.events), undefined);
      const summary = summarize(result.events);
      if (typeof expected.text === "string") assert.equal(summary.text, expected.text);
      else assert.match(summary.text, expected.text);
      if (expected.reasoning) assert.match(summary.reasoning, expected.reasoning);
      else assert.equal(summary.reasoning, "");
      assert.deepEqual(
        summary.toolCalls.map((call) => ({
          name: call.name,
          args: call.arguments === "" ? "" : JSON.parse(call.arguments),
        })),
        expected.calls,
      );
      assert.equal(summary.finishCount, 1);
      assert.equal(summary.finish?.reason, expected.finish);
      assert.deepEqual(summary.usage, expected.usage);
      assert.equal(summary.signatures.length, expected.signed);
      const state = summary.finish?.state as ThinkingState | undefined;
      assert.equal(state?.thinking.length ?? 0, expected.signed);
      if (state) {
        assert.equal(state.thinking[0].thinking, summary.reasoning);
        assert.equal(state.thinking[0].signature, summary.signatures[0]);
      }
    });
  }

  test("tool input sent whole in content_block_start (non-streaming proxies; synthetic)", async () => {
    const recording = loadRecording("anthropic-stream-parallel-tool-use.sse");
    const text = new TextDecoder().decode(recording.body)
      .replace(/"input":\{\}/g, '"input":{"password":"whole"}')
      .replace(
        /event: content_block_delta\ndata: \{"type":"content_block_delta","index":[12],"delta":\{"type":"input_json_delta"[^\n]*\n\n/g,
        "",
      );
    const sent: SentRequest[] = [];
    const gateway = anthropicMessages({
      model: "claude-sonnet-5-5",
      apiKey: KEY,
      fetch: replayFetch({ ...recording, body: new TextEncoder().encode(text) }, sent),
    });
    const result = await runGateway(gateway);
    assert.equal(result.error, undefined);
    assert.equal(violation(result.events), undefined);
    assert.deepEqual(summarize(result.events).toolCalls.map((call) => JSON.parse(call.arguments)), [
      { password: "whole" },
      { password: "whole" },
    ]);
  });

  test("request: system, tools, max_tokens defaults and headers", async () => {
    const sent: SentRequest[] = [];
    await runGateway(messages("anthropic-stream-max-tokens.sse", sent, 1234));
    assert.equal(sent[0].url, "https://api.anthropic.com/v1/messages");
    // SDK 1.x sends the key as a bearer token; older versions used x-api-key.
    assert.ok(
      sent[0].headers["x-api-key"] === KEY || sent[0].headers.authorization === `Bearer ${KEY}`,
    );
    assert.ok(sent[0].headers["anthropic-version"]);
    // Prompt caching is on by default: breakpoints end the tools, the system prompt and the
    // newest message (three of the four the API allows).
    assert.deepEqual(sent[0].body, {
      model: "claude-sonnet-5-5",
      max_tokens: 1234,
      system: [{ type: "text", text: "Be brief.", cache_control: EPHEMERAL }],
      messages: [{
        role: "user",
        content: [{
          type: "text",
          text: "What is the weather in Paris?",
          cache_control: EPHEMERAL,
        }],
      }],
      tools: [{
        name: "get_weather",
        description: "Current weather for a city.",
        input_schema: {
          type: "object",
          properties: { city: { type: "string" } },
          required: ["city"],
        },
        cache_control: EPHEMERAL,
      }],
      stream: true,
    });
    const uncached: SentRequest[] = [];
    await runGateway(messages("anthropic-stream-max-tokens.sse", uncached, 1234, false));
    assert.deepEqual(uncached[0].body, {
      model: "claude-sonnet-5-5",
      max_tokens: 1234,
      system: "Be brief.",
      messages: [{
        role: "user",
        content: [{ type: "text", text: "What is the weather in Paris?" }],
      }],
      tools: [{
        name: "get_weather",
        description: "Current weather for a city.",
        input_schema: {
          type: "object",
          properties: { city: { type: "string" } },
          required: ["city"],
        },
      }],
      stream: true,
    });
    const budget: SentRequest[] = [];
    await runGateway(
      messages("anthropic-stream-max-tokens.sse", budget),
      basicRequest({ maxOutputTokens: 77 }),
    );
    assert.equal(budget[0].body.max_tokens, 77);
    const fallback: SentRequest[] = [];
    await runGateway(messages("anthropic-stream-max-tokens.sse", fallback));
    assert.equal(fallback[0].body.max_tokens, 4096);
  });

  test("round trip: signed thinking is replayed first, then tool_use, then the tool_result", async () => {
    const first = summarize(
      (await runGateway(messages("anthropic-stream-thinking-tool-use.sse"))).events,
    );
    const call = first.toolCalls[0];
    const sent: SentRequest[] = [];
    const followUp = basicRequest({
      messages: [
        { role: "system", text: "Be brief." },
        { role: "user", text: "Use the fixed_version tool." },
        {
          role: "assistant",
          text: "",
          reasoning: first.reasoning,
          toolCalls: [call],
          state: first.finish?.state,
        },
        { role: "tool", callId: call.callId, name: call.name, output: "1.2.3" },
        { role: "user", text: "And then?" },
      ],
    });
    await runGateway(messages("anthropic-stream-thinking-text.sse", sent), followUp);
    const thinking = (first.finish?.state as ThinkingState).thinking[0];
    assert.deepEqual(sent[0].body.messages, [
      { role: "user", content: [{ type: "text", text: "Use the fixed_version tool." }] },
      {
        role: "assistant",
        content: [
          { type: "thinking", thinking: thinking.thinking, signature: thinking.signature },
          {
            type: "tool_use",
            id: "toolu_01825dXWLSoJwCst1qTsiWdb",
            name: "fixed_version",
            input: {},
          },
        ],
      },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "toolu_01825dXWLSoJwCst1qTsiWdb", content: "1.2.3" },
          { type: "text", text: "And then?", cache_control: EPHEMERAL },
        ],
      },
    ]);
    assert.ok(thinking.signature.startsWith("EoQDCm0I"));
  });

  test("error tool results are flagged and images become base64 blocks", async () => {
    const sent: SentRequest[] = [];
    const image = { type: "image", mediaType: "image/webp", dataBase64: "UklGRg==" };
    await runGateway(
      messages("anthropic-stream-max-tokens.sse", sent),
      basicRequest({
        messages: [
          { role: "user", text: "Look.", attachments: [image] },
          {
            role: "assistant",
            text: "Checking.",
            toolCalls: [{ callId: "t1", name: "get_weather", arguments: "{bad" }],
          },
          {
            role: "tool",
            callId: "t1",
            name: "get_weather",
            output: "invalid JSON",
            isError: true,
          },
        ],
      }),
    );
    assert.deepEqual(sent[0].body.messages, [
      {
        role: "user",
        content: [
          { type: "image", source: { type: "base64", media_type: "image/webp", data: "UklGRg==" } },
          { type: "text", text: "Look." },
        ],
      },
      {
        role: "assistant",
        content: [{ type: "text", text: "Checking." }, {
          type: "tool_use",
          id: "t1",
          name: "get_weather",
          input: {},
        }],
      },
      {
        role: "user",
        content: [{
          type: "tool_result",
          tool_use_id: "t1",
          content: "invalid JSON",
          is_error: true,
          cache_control: EPHEMERAL,
        }],
      },
    ]);
  });
});

test("anthropicMessages validates maxTokens and derives the state key", () => {
  assert.throws(
    () => anthropicMessages({ model: "m", maxTokens: 0, apiKey: "test-key" }),
    (error) => error instanceof FloretError,
  );
  assert.equal(
    anthropicMessages({ model: "claude-x", apiKey: "test-key" }).info.stateKey,
    "anthropic:claude-x:messages",
  );
});
