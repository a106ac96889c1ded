import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { countTokens as o200kCount } from "gpt-tokenizer/encoding/o200k_base";
import type { ProviderMessage, ProviderTool } from "@floret/engine";
import {
  estimateTokens,
  IMAGE_TOKENS,
  roughTokenCount,
  tokenizerForModel,
} from "@floret/engine/tokens";
import { readFixtureText } from "./support/provider_fixtures.ts";

const SECRET_TOOL: ProviderTool = {
  name: "secret_retrieval_tool",
  description: "A tool that requires a password to retrieve a secret.",
  inputSchema: {
    properties: { password: { title: "Password", type: "string" } },
    required: ["password"],
    additionalProperties: false,
    type: "object",
  },
};
const PARALLEL_TOOLS_MESSAGES: ProviderMessage[] = [
  { role: "system", text: "Use parallel tool calling." },
  {
    role: "user",
    text: "Please retrieve the secrets associated with each of these passwords: mellon,radiance",
  },
];

/** The largest input-token count a recorded response reports. */
function reportedInputTokens(file: string): number {
  const body = readFixtureText(file);
  const counts = [...body.matchAll(/"(?:prompt_tokens|input_tokens)":(\d+)/g)].map((m) =>
    Number(m[1])
  );
  assert.ok(counts.length > 0, `no usage in ${file}`);
  return Math.max(...counts);
}

/**
 * Recorded requests whose content is known. The `.source.txt` files give
 * model, message and tool counts and (for the first two) the prompt; the
 * exact texts were confirmed from the request bodies in the upstream
 * cassettes the fixtures were copied from (Mirascope e2e cassettes for the
 * "List all U.S. states." and secret_retrieval_tool requests, simonw/llm-anthropic
 * `test_thinking_prompt.yaml` for the pelican prompt).
 */
const RECORDED = [
  {
    file: "openai-chat-stream-finish-length.sse",
    model: "gpt-4o",
    messages: [{ role: "user", text: "List all U.S. states." }] as ProviderMessage[],
    tools: [] as ProviderTool[],
  },
  {
    file: "openai-chat-stream-parallel-tool-calls.sse",
    model: "gpt-4o",
    messages: PARALLEL_TOOLS_MESSAGES,
    tools: [SECRET_TOOL],
  },
  {
    file: "anthropic-stream-max-tokens.sse",
    model: "claude-sonnet-4-0",
    messages: [{ role: "user", text: "List all U.S. states." }] as ProviderMessage[],
    tools: [] as ProviderTool[],
  },
  {
    file: "anthropic-stream-parallel-tool-use.sse",
    model: "claude-sonnet-4-0",
    messages: PARALLEL_TOOLS_MESSAGES,
    tools: [SECRET_TOOL],
  },
  {
    // Extended thinking was on: the provider adds hidden instructions.
    file: "anthropic-stream-thinking-text.sse",
    model: "claude-sonnet-4-5",
    messages: [{
      role: "user",
      text: "Two names for a pet pelican, be brief",
    }] as ProviderMessage[],
    tools: [] as ProviderTool[],
  },
  {
    file: "deepseek-stream-reasoning-content.sse",
    model: "deepseek-reasoner",
    messages: [{ role: "user", text: "Hello" }] as ProviderMessage[],
    tools: [] as ProviderTool[],
  },
];

test("tokenizerForModel maps model families to encodings", () => {
  const cases: [string, string][] = [
    ["gpt-4o", "o200k_base"],
    ["gpt-4o-mini-2024-07-18", "o200k_base"],
    ["gpt-4.1-mini", "o200k_base"],
    ["gpt-5-nano", "o200k_base"],
    ["openai/gpt-5.1-codex-max", "o200k_base"],
    ["o1", "o200k_base"],
    ["o3-mini", "o200k_base"],
    ["o4-mini-deep-research", "o200k_base"],
    ["gpt-4", "cl100k_base"],
    ["gpt-4-turbo", "cl100k_base"],
    ["GPT-3.5-Turbo", "cl100k_base"],
    ["claude-sonnet-4-5", "estimate"],
    ["deepseek-reasoner", "estimate"],
    ["o10-fictional", "estimate"],
  ];
  for (const [model, expected] of cases) assert.equal(tokenizerForModel(model), expected, model);
});

for (const recorded of RECORDED) {
  test(`recorded usage: ${recorded.file}`, async () => {
    const reported = reportedInputTokens(recorded.file);
    const estimate = await estimateTokens(recorded, recorded.model);
    if (estimate.tokenizer === "estimate") {
      assert.ok(estimate.tokens >= reported, `${estimate.tokens} < reported ${reported}`);
    } else if (recorded.tools.length === 0) {
      assert.equal(estimate.tokens, reported);
    } else {
      // OpenAI's tool rendering is not published; ours is within a token or two.
      assert.ok(Math.abs(estimate.tokens - reported) <= 2, `${estimate.tokens} vs ${reported}`);
    }
  });
}

test("tool schemas, framing and images are counted", async () => {
  const base = { messages: PARALLEL_TOOLS_MESSAGES, tools: [] as ProviderTool[] };
  for (const model of ["gpt-4o", "gpt-4", "claude-sonnet-4-5"]) {
    const plain = await estimateTokens(base, model);
    const withTool = await estimateTokens({ ...base, tools: [SECRET_TOOL] }, model);
    assert.ok(withTool.toolTokens > 0 && withTool.tokens > plain.tokens, model);
    const twoMore = await estimateTokens({
      ...base,
      messages: [...base.messages, { role: "assistant", text: "" }, { role: "user", text: "" }],
    }, model);
    assert.ok(twoMore.tokens - plain.tokens >= 2 * 3, `${model}: framing per message`);
    const image = { type: "image", mediaType: "image/png", dataBase64: "AAAA" };
    const withImages = await estimateTokens({
      ...base,
      messages: [...base.messages, { role: "user", text: "", attachments: [image, image] }],
    }, model);
    assert.equal(withImages.imageCount, 2);
    assert.equal(withImages.imageTokens, 2 * IMAGE_TOKENS);
  }
});

test("tool calls, tool results and special-token text are counted without throwing", async () => {
  const request = {
    messages: [
      { role: "user", text: "<|endoftext|> is plain text here" },
      {
        role: "assistant",
        text: "",
        reasoning: "Need the secret.",
        toolCalls: [{ callId: "c1", name: "secret_retrieval_tool", arguments: '{"password":"x"}' }],
      },
      { role: "tool", callId: "c1", name: "secret_retrieval_tool", output: "Welcome to Moria!" },
    ] as ProviderMessage[],
    tools: [SECRET_TOOL],
  };
  const exact = await estimateTokens(request, "gpt-4.1");
  assert.equal(exact.tokenizer, "o200k_base");
  assert.equal(exact.tokens, exact.messageTokens + exact.toolTokens + exact.imageTokens);
  assert.equal((await estimateTokens(request, "gpt-3.5-turbo")).tokenizer, "cl100k_base");
});

const textArbitrary = fc.oneof(
  fc.string({ unit: "binary", maxLength: 200 }),
  fc.string({ unit: "grapheme", maxLength: 200 }),
  fc.lorem({ maxCount: 40 }),
);

test("estimate never falls below the o200k count of the same text", async () => {
  await fc.assert(
    fc.asyncProperty(textArbitrary, async (text) => {
      const request = { messages: [{ role: "user" as const, text }], tools: [] };
      for (const model of ["claude-sonnet-4-5", "deepseek-chat"]) {
        const estimate = await estimateTokens(request, model);
        assert.ok(estimate.tokens >= o200kCount(text, { disallowedSpecial: new Set() }));
      }
    }),
    { numRuns: 150 },
  );
});

test("estimate never falls below the exact o200k count of the same request", async () => {
  const message = fc.oneof(
    textArbitrary.map((text): ProviderMessage => ({ role: "user", text })),
    textArbitrary.map((text): ProviderMessage => ({ role: "assistant", text })),
    fc.tuple(fc.string({ maxLength: 20 }), textArbitrary).map((
      [name, output],
    ): ProviderMessage => ({ role: "tool", callId: "c", name, output })),
  );
  const tool = fc.record({
    name: fc.stringMatching(/^[a-z_]{1,20}$/),
    description: textArbitrary,
    inputSchema: fc.constant(SECRET_TOOL.inputSchema),
  });
  await fc.assert(
    fc.asyncProperty(
      fc.array(message, { maxLength: 6 }),
      fc.array(tool, { maxLength: 3 }),
      async (messages, tools) => {
        const exact = await estimateTokens({ messages, tools }, "gpt-4o");
        const estimate = await estimateTokens({ messages, tools }, "claude-opus-4-5");
        assert.ok(estimate.tokens >= exact.tokens, `${estimate.tokens} < ${exact.tokens}`);
      },
    ),
    { numRuns: 100 },
  );
});

// Common English words that are single o200k tokens with or without a leading space.
const COMMON_WORDS = (
  "the of and to in is was for that with as on by at from it be this are an or not have " +
  "but which one all were when we there can more will would if so what about out up time " +
  "into only some could them other than then now its also two first after new year"
).split(" ");

test("roughTokenCount is zero for empty text and at least the o200k count of English prose", () => {
  assert.equal(roughTokenCount(""), 0);
  assert.equal(roughTokenCount("Hello, world"), 3);
  assert.equal(roughTokenCount("日本語"), 3);
  const word = fc.constantFrom(...COMMON_WORDS);
  const sentence = fc.tuple(
    fc.array(word, { minLength: 1, maxLength: 30 }),
    fc.constantFrom(".", "?", "!", ","),
  )
    .map(([words, end]) => words.join(" ") + end);
  fc.assert(
    fc.property(fc.array(sentence, { minLength: 1, maxLength: 20 }), (sentences) => {
      const text = sentences.join(" ");
      assert.ok(roughTokenCount(text) >= o200kCount(text), text);
    }),
    { numRuns: 300 },
  );
  const prose = "The quick brown fox jumps over the lazy dog. Token estimation for budgets " +
    "should be conservative but not absurd, so we measure it on ordinary English prose.";
  const ratio = roughTokenCount(prose) / o200kCount(prose);
  assert.ok(ratio >= 1 && ratio <= 1.6, `ratio ${ratio}`);
});
