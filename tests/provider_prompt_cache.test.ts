// Prompt caching: the request shapes each gateway sends, the cache key the
// engine derives from the thread, and cache tokens in usage. The usage cases
// edit the cache counters of real recordings (labelled synthetic): every
// recording we have was made with a cold cache, so its counters are 0.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { anthropicMessages } from "@floret/engine/anthropic";
import { openAIChat, openAIResponses } from "@floret/engine/openai";
import { loadRecording, replayFetch } from "./support/provider_fixtures.ts";
import type { Recording, SentRequest } from "./support/provider_fixtures.ts";
import { basicRequest, runGateway, summarize } from "./support/gateway_run.ts";
import { engine } from "./support/engine.ts";

const EPHEMERAL = { type: "ephemeral" };

/** A recording whose body had `edit` applied. */
function edited(name: string, edit: (body: string) => string): Recording {
  const recording = loadRecording(name);
  const body = edit(new TextDecoder().decode(recording.body));
  return { ...recording, body: new TextEncoder().encode(body) };
}

function countBreakpoints(value: unknown): number {
  if (Array.isArray(value)) return value.reduce((n, item) => n + countBreakpoints(item), 0);
  if (typeof value !== "object" || value === null) return 0;
  return Object.entries(value).reduce(
    (n, [key, item]) => n + (key === "cache_control" ? 1 : countBreakpoints(item)),
    0,
  );
}

describe("prompt caching on recordings", () => {
  test("anthropic: at most four breakpoints, never on thinking, the newest message last", async () => {
    const sent: SentRequest[] = [];
    const gateway = anthropicMessages({
      model: "claude-sonnet-5-5",
      apiKey: "sk-ant-test",
      fetch: replayFetch(loadRecording("anthropic-stream-max-tokens.sse"), sent),
    });
    const request = basicRequest({
      messages: [
        { role: "system", text: "Be brief." },
        { role: "user", text: "First question." },
        { role: "assistant", text: "First answer." },
        { role: "user", text: "Second question." },
      ],
    });
    await runGateway(gateway, request);
    const body = sent[0].body as Record<string, unknown>;
    assert.equal(countBreakpoints(body), 3);
    const messages = body.messages as { content: Record<string, unknown>[] }[];
    assert.deepEqual(messages.at(-1)?.content.at(-1)?.cache_control, EPHEMERAL);
    assert.equal(messages[0].content[0].cache_control, undefined);
    assert.equal(messages[1].content[0].cache_control, undefined);
  });

  test("anthropic: cache read and write tokens reach usage, disjoint from input (synthetic)", async () => {
    const recording = edited(
      "anthropic-stream-parallel-tool-use.sse",
      (body) =>
        body
          .replaceAll('"cache_creation_input_tokens":0', '"cache_creation_input_tokens":120')
          .replaceAll('"cache_read_input_tokens":0', '"cache_read_input_tokens":2048'),
    );
    const gateway = anthropicMessages({
      model: "claude-sonnet-5-5",
      apiKey: "sk-ant-test",
      fetch: replayFetch(recording, []),
    });
    const summary = summarize((await runGateway(gateway)).events);
    assert.deepEqual(summary.usage, {
      inputTokens: 416,
      outputTokens: 109,
      cacheReadTokens: 2048,
      cacheWriteTokens: 120,
    });
  });

  test("openai chat: prompt_cache_key from the request's cache key, for OpenAI only", async () => {
    const request = basicRequest({ cacheKey: "thread_abc" });
    const sent: SentRequest[] = [];
    const recording = loadRecording("openai-chat-stream-text-usage.sse");
    await runGateway(
      openAIChat({ model: "gpt-4o", apiKey: "k", fetch: replayFetch(recording, sent) }),
      request,
    );
    assert.equal(sent[0].body.prompt_cache_key, "thread_abc");

    const off: SentRequest[] = [];
    await runGateway(
      openAIChat({
        model: "gpt-4o",
        apiKey: "k",
        promptCache: false,
        fetch: replayFetch(recording, off),
      }),
      request,
    );
    assert.equal("prompt_cache_key" in off[0].body, false);

    const compatible: SentRequest[] = [];
    await runGateway(
      openAIChat({
        model: "deepseek-chat",
        provider: "deepseek",
        apiKey: "k",
        fetch: replayFetch(recording, compatible),
      }),
      request,
    );
    assert.equal("prompt_cache_key" in compatible[0].body, false);
  });

  test("openai chat: cached prompt tokens become cacheReadTokens (synthetic)", async () => {
    const recording = edited(
      "openai-chat-stream-text-usage.sse",
      (body) =>
        body
          .replace('"prompt_tokens":14', '"prompt_tokens":1038')
          .replace('"cached_tokens":0', '"cached_tokens":1024'),
    );
    const gateway = openAIChat({ model: "gpt-4o", apiKey: "k", fetch: replayFetch(recording, []) });
    const usage = summarize((await runGateway(gateway)).events).usage;
    assert.equal(usage?.inputTokens, 14);
    assert.equal(usage?.cacheReadTokens, 1024);
  });

  test("openai responses: prompt_cache_key and cached input tokens (synthetic)", async () => {
    const recording = edited(
      "openai-responses-stream-text.sse",
      (body) =>
        body
          .replace('"input_tokens":278', '"input_tokens":1302')
          .replace(
            '"input_tokens_details":{"cached_tokens":0}',
            '"input_tokens_details":{"cached_tokens":1024}',
          ),
    );
    const sent: SentRequest[] = [];
    const gateway = openAIResponses({
      model: "gpt-4o",
      apiKey: "k",
      fetch: replayFetch(recording, sent),
    });
    const result = await runGateway(gateway, basicRequest({ cacheKey: "thread_xyz" }));
    assert.equal(sent[0].body.prompt_cache_key, "thread_xyz");
    const usage = summarize(result.events).usage;
    assert.equal(usage?.inputTokens, 278);
    assert.equal(usage?.cacheReadTokens, 1024);
  });
});

test("the engine keys every request of a thread by that thread, outside the fingerprint", async () => {
  const { host, threads, gateway, threadId } = await engine([
    { toolCalls: [{ name: "add", arguments: { a: 1, b: 2 } }] },
    { text: "3" },
  ]);
  try {
    await threads.send({ threadId, requestKey: "k1", input: { text: "1+2?" } });
    await threads.waitForIdle(threadId);
    assert.equal(gateway.requests.length, 2);
    for (const request of gateway.requests) assert.equal(request.cacheKey, threadId);
  } finally {
    await host.shutdown();
  }
});

test("gateways refuse a non-boolean promptCache", () => {
  assert.throws(
    () => openAIChat({ model: "m", promptCache: "yes" as unknown as boolean }),
    (error: unknown) => (error as { code?: string }).code === "invalid_input",
  );
});
