// modelInfo: the offline catalog is well-formed, finds dated snapshots, and
// fills the capabilities a gateway was not given (the host's always win).
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { MODEL_CATALOG_UPDATED, modelCatalog, modelInfo } from "@floret/engine";
import { openAIChat, openAIResponses } from "@floret/engine/openai";
import { anthropicMessages } from "@floret/engine/anthropic";

const LEVELS = ["minimal", "low", "medium", "high", "max"];

describe("the catalog", () => {
  test("every row is well-formed", () => {
    const rows = modelCatalog();
    assert.ok(rows.length >= 20, `${rows.length} rows`);
    const providers = new Set(rows.map(([provider]) => provider));
    for (const provider of ["openai", "anthropic", "deepseek"]) assert.ok(providers.has(provider));
    const seen = new Set<string>();
    for (const [provider, model, info] of rows) {
      const name = `${provider}/${model}`;
      assert.ok(!seen.has(name), `${name} twice`);
      seen.add(name);
      assert.equal(model, model.trim().toLowerCase(), `${name}: ids are lower case`);
      assert.doesNotMatch(model, /-(\d{8}|\d{4}-\d{2}-\d{2}|latest)$/, `${name}: no date suffix`);
      assert.ok(Number.isInteger(info.contextWindowTokens), name);
      assert.ok(info.contextWindowTokens >= 8_000 && info.contextWindowTokens <= 10_000_000, name);
      if (info.maxOutputTokens !== undefined) {
        assert.ok(Number.isInteger(info.maxOutputTokens) && info.maxOutputTokens >= 1_000, name);
        assert.ok(info.maxOutputTokens <= info.contextWindowTokens, name);
      }
      if (info.reasoningLevels !== undefined) {
        assert.ok(info.reasoningLevels.length > 0, name);
        assert.deepEqual(
          info.reasoningLevels,
          LEVELS.filter((level) => info.reasoningLevels!.includes(level as never)),
          `${name}: known levels, in order, once each`,
        );
      }
      if (info.imageInput !== undefined) assert.equal(typeof info.imageInput, "boolean", name);
      assert.deepEqual(
        Object.keys(info).filter((key) =>
          !["contextWindowTokens", "maxOutputTokens", "reasoningLevels", "imageInput"].includes(key)
        ),
        [],
      );
    }
    assert.match(MODEL_CATALOG_UPDATED, /^\d{4}-\d{2}-\d{2}$/);
  });

  test("lookups: exact ids, dated snapshots, -latest, any case; unknown is undefined", () => {
    assert.deepEqual(modelInfo("openai", "gpt-4o"), {
      contextWindowTokens: 128_000,
      maxOutputTokens: 16_384,
      imageInput: true,
    });
    assert.equal(modelInfo("openai", "gpt-4o-2024-08-06")?.contextWindowTokens, 128_000);
    assert.equal(modelInfo("OpenAI", "GPT-5")?.contextWindowTokens, 400_000);
    assert.deepEqual(modelInfo("openai", "gpt-5")?.reasoningLevels, [
      "minimal",
      "low",
      "medium",
      "high",
    ]);
    assert.equal(modelInfo("anthropic", "claude-sonnet-4-5-20250929")?.maxOutputTokens, 64_000);
    assert.equal(modelInfo("anthropic", "claude-3-5-haiku-latest")?.maxOutputTokens, 8_192);
    assert.equal(modelInfo("deepseek", "deepseek-chat")?.imageInput, false);
    assert.equal(modelInfo("openai", "my-finetune"), undefined);
    assert.equal(modelInfo("nobody", "gpt-4o"), undefined);
    assert.equal(modelInfo("openai", "constructor"), undefined);
    assert.equal(modelInfo("openai", "toString"), undefined);
  });

  test("each answer is a copy", () => {
    const first = modelInfo("openai", "gpt-5")!;
    first.reasoningLevels!.push("max");
    first.contextWindowTokens = 1;
    assert.equal(modelInfo("openai", "gpt-5")!.contextWindowTokens, 400_000);
    assert.equal(modelInfo("openai", "gpt-5")!.reasoningLevels!.length, 4);
  });
});

describe("gateways fill missing capabilities from it", () => {
  test("a known model without capabilities gets the catalog's", () => {
    const gateway = openAIResponses({ model: "gpt-5-mini", apiKey: "sk-test" });
    const capabilities = gateway.info.capabilities as Record<string, unknown>;
    assert.equal(capabilities.contextWindowTokens, 400_000);
    assert.equal(capabilities.maxOutputTokens, 128_000);
    assert.equal(capabilities.reasoning, "supported");
    assert.deepEqual(capabilities.reasoningLevels, ["minimal", "low", "medium", "high"]);
    assert.equal(capabilities.images, true);
    const claude = anthropicMessages({ model: "claude-haiku-4-5-20251001", apiKey: "k" });
    assert.equal(claude.info.capabilities.contextWindowTokens, 200_000);
    const deepseek = openAIChat({ model: "deepseek-chat", provider: "deepseek", apiKey: "k" });
    assert.equal(deepseek.info.capabilities.images, false);
  });

  test("the host's capabilities win field by field; an unknown model gets none", () => {
    const gateway = openAIResponses({
      model: "gpt-4o",
      apiKey: "sk-test",
      capabilities: { contextWindowTokens: 50_000, images: false },
    });
    const capabilities = gateway.info.capabilities as Record<string, unknown>;
    assert.equal(capabilities.contextWindowTokens, 50_000);
    assert.equal(capabilities.maxOutputTokens, 16_384);
    assert.equal(capabilities.images, false);
    assert.equal(capabilities.imageInput, false);
    // An unknown model gets no figures from the table; only the gateway's own
    // default reasoning levels (OpenAI's) are there.
    const unknown = openAIResponses({ model: "my-finetune", apiKey: "sk-test" });
    assert.deepEqual(unknown.info.capabilities, {
      reasoningLevels: ["minimal", "low", "medium", "high"],
    });
    const plain = openAIResponses({
      model: "gpt-5",
      apiKey: "sk-test",
      capabilities: { reasoning: "unsupported" },
    });
    assert.equal((plain.info.capabilities as Record<string, unknown>).reasoningLevels, undefined);
  });
});
