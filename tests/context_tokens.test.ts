/**
 * Token counters for an agent's context: `tokenCounter(model)` from
 * `@floret/engine/tokens` agrees with `estimateTokens`, an agent that takes
 * one reports its counts in `context()` and compacts by them, and a broken
 * host counter cannot break a run.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import {
  defineAgent,
  type ProviderMessage,
  type ProviderTool,
  type TokenCounter,
} from "@floret/engine";
import { estimateTokens, roughTokenCount, tokenCounter } from "@floret/engine/tokens";
import { contextGateway, words } from "./support/context_gateway.ts";
import { CONTEXT_SYSTEM, setup } from "./support/context_host.ts";

const TOOLS: ProviderTool[] = [{
  name: "lookup",
  description: "Look a word up in the dictionary",
  inputSchema: {
    type: "object",
    properties: { word: { type: "string", description: "The word" } },
    required: ["word"],
  },
}];
const MESSAGES: ProviderMessage[] = [
  { role: "system", text: "You are a lexicographer." },
  { role: "user", text: "What does 'sesquipedalian' mean? Look it up, please." },
  {
    role: "assistant",
    text: "",
    toolCalls: [{ callId: "call_1", name: "lookup", arguments: '{"word":"sesquipedalian"}' }],
  },
  { role: "tool", callId: "call_1", name: "lookup", output: "given to using long words" },
  { role: "assistant", text: "It means given to using long words." },
];

function total(counter: TokenCounter, messages: ProviderMessage[], tools: ProviderTool[]) {
  let sum = counter.requestOverhead + counter.tools(tools);
  for (const message of messages) sum += counter.message(message);
  return sum;
}

describe("tokenCounter(model)", () => {
  test("is exact for OpenAI models: the pieces add up to estimateTokens", async () => {
    for (const model of ["gpt-4o", "gpt-4.1-mini", "gpt-4"]) {
      const counter = await tokenCounter(model);
      const expected = await estimateTokens({ messages: MESSAGES, tools: TOOLS }, model);
      assert.equal(counter.name, expected.tokenizer);
      assert.equal(total(counter, MESSAGES, TOOLS), expected.tokens, model);
      assert.equal(total(counter, MESSAGES, []), expected.tokens - expected.toolTokens, model);
    }
  });

  test("is conservative elsewhere: never below estimateTokens, at most one token per message above", async () => {
    const counter = await tokenCounter("claude-sonnet-4-5");
    const expected = await estimateTokens(
      { messages: MESSAGES, tools: TOOLS },
      "claude-sonnet-4-5",
    );
    assert.equal(counter.name, "estimate");
    const sum = total(counter, MESSAGES, TOOLS);
    assert.ok(sum >= expected.tokens && sum <= expected.tokens + MESSAGES.length, `${sum}`);
    assert.ok(counter.text("hello world") >= 2);
  });
});

describe("an agent's token counter", () => {
  test("context() and view.context report the counter's estimate of the next request", async () => {
    const counter = await tokenCounter("gpt-4o");
    const e = await setup({ tokenCounter: counter });
    const view = await e.say("What is the capital of Portugal?");
    const sent = e.gateway.requests[0];
    const next: ProviderMessage[] = [...sent.messages, { role: "assistant", text: "answer 1" }];
    const expected = await estimateTokens({ messages: next, tools: [] }, "gpt-4o");
    const figures = await e.threads.context(e.threadId);
    assert.equal(figures.estimateTokens, expected.tokens);
    assert.equal(figures.estimator, "o200k_base");
    assert.equal(view.context?.estimateTokens, expected.tokens);

    const rough = await setup();
    await rough.say("What is the capital of Portugal?");
    const roughFigures = await rough.threads.context(rough.threadId);
    assert.notEqual(roughFigures.estimateTokens, figures.estimateTokens, "the counter was used");
    assert.equal(roughFigures.estimator, "rough");
    await e.host.shutdown();
    await rough.host.shutdown();
  });

  test("thresholds and compaction follow the counter", async () => {
    // Ten times the rough count: the same conversation crosses 0.9·W early.
    const tenfold: TokenCounter = {
      name: "tenfold",
      requestOverhead: 64,
      text: (text) => 10 * roughTokenCount(text),
      message: (message) =>
        8 + 10 * roughTokenCount("text" in message ? message.text : message.output),
      tools: () => 0,
    };
    const counted = await setup({ tokenCounter: tenfold });
    const plain = await setup();
    for (let i = 0; i < 8; i++) {
      const text = `turn ${i}: ${words(100, `t${i}x`)}`;
      assert.equal((await counted.say(text)).turns.at(-1)?.outcome, "completed");
      assert.equal((await plain.say(text)).turns.at(-1)?.outcome, "completed");
    }
    assert.equal(plain.gateway.summaries.length, 0);
    assert.ok(counted.gateway.summaries.length >= 1, "the tenfold counter compacted");
    const figures = await counted.threads.context(counted.threadId);
    assert.ok(figures.compactions.some((c) => c.status === "compacted"));
    assert.ok(figures.estimateTokens < 7200);
    await counted.host.shutdown();
    await plain.host.shutdown();
  });

  test("a counter that throws or answers nonsense falls back to the rough count", async () => {
    const broken: TokenCounter = {
      name: "broken",
      requestOverhead: 64,
      text: () => -1,
      message: () => {
        throw new Error("counter bug");
      },
      tools: () => Number.POSITIVE_INFINITY,
    };
    const e = await setup({ tokenCounter: broken });
    const rough = await setup();
    const view = await e.say("hello there");
    await rough.say("hello there");
    assert.equal(view.turns.at(-1)?.outcome, "completed");
    assert.equal(
      (await e.threads.context(e.threadId)).estimateTokens,
      (await rough.threads.context(rough.threadId)).estimateTokens,
    );
    await e.host.shutdown();
    await rough.host.shutdown();
  });

  test("defineAgent refuses a counter of the wrong shape", () => {
    const gateway = contextGateway(CONTEXT_SYSTEM);
    for (const tokenCounter of [{}, { name: "x", text: () => 1 }, 42, "o200k_base"]) {
      assert.throws(
        () =>
          defineAgent({
            id: "a",
            systemPrompt: CONTEXT_SYSTEM,
            gateway,
            context: { tokenCounter: tokenCounter as unknown as TokenCounter },
          }),
        { code: "invalid_input" },
      );
    }
  });
});
