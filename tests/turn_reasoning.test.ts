/**
 * Issue 29, reasoning effort: `defineAgent({ reasoning: { effort } })` reaches
 * every request (`ProviderRequest.reasoning`, in its fingerprint), each
 * built-in gateway maps it to its provider's field, and a level the gateway
 * does not list is `invalid_input` at `defineAgent`.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  defineAgent,
  FloretError,
  type Gateway,
  memoryStore,
  openHost,
  type ReasoningEffort,
} from "@floret/engine";
import { scriptedGateway } from "@floret/engine/testing";
import { openAIChat, openAIResponses } from "@floret/engine/openai";
import { anthropicMessages } from "@floret/engine/anthropic";
import { captureFetch } from "./support/capture_fetch.ts";

async function runOnce(gateway: Gateway, effort?: ReasoningEffort): Promise<void> {
  const host = await openHost({ store: memoryStore() });
  const threads = host.threads({
    agent: defineAgent({
      id: "a",
      systemPrompt: "s",
      gateway,
      providerRetry: { disabled: true },
      ...(effort ? { reasoning: { effort } } : {}),
    }),
  });
  const { threadId } = await threads.create({ requestKey: "c" });
  await threads.send({ threadId, requestKey: "s", input: { text: "go" } });
  await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
  await host.shutdown();
}

test("the effort reaches ProviderRequest.reasoning and changes the fingerprint", async () => {
  const withEffort = scriptedGateway([{ text: "ok" }]);
  await runOnce(withEffort, "low");
  assert.deepEqual(withEffort.requests[0].reasoning, { effort: "low" });
  const without = scriptedGateway([{ text: "ok" }]);
  await runOnce(without);
  assert.equal(without.requests[0].reasoning, undefined);
  assert.notEqual(withEffort.requests[0].fingerprint, without.requests[0].fingerprint);
});

test("Chat Completions sends reasoning_effort", async () => {
  const captured = captureFetch();
  await runOnce(openAIChat({ model: "gpt-5", apiKey: "sk-test", fetch: captured.fetch }), "high");
  assert.equal(captured.bodies[0].reasoning_effort, "high");
  const plain = captureFetch();
  await runOnce(openAIChat({ model: "gpt-5", apiKey: "sk-test", fetch: plain.fetch }));
  assert.equal(plain.bodies[0].reasoning_effort, undefined);
});

test("Responses sends reasoning.effort, keeping other reasoning fields of extraBody", async () => {
  const captured = captureFetch();
  await runOnce(
    openAIResponses({
      model: "gpt-5",
      apiKey: "sk-test",
      fetch: captured.fetch,
      extraBody: { reasoning: { summary: "auto" } },
    }),
    "minimal",
  );
  assert.deepEqual(captured.bodies[0].reasoning, { summary: "auto", effort: "minimal" });
});

test("Anthropic sends a thinking budget by level, with max_tokens above it", async () => {
  const budgets: number[] = [];
  for (const effort of ["minimal", "medium", "max"] as const) {
    const captured = captureFetch();
    await runOnce(
      anthropicMessages({ model: "claude-x", apiKey: "sk-ant-test", fetch: captured.fetch }),
      effort,
    );
    const body = captured.bodies[0] as {
      thinking: { type: string; budget_tokens: number };
      max_tokens: number;
    };
    assert.equal(body.thinking.type, "enabled");
    assert.ok(body.thinking.budget_tokens >= 1024);
    assert.ok(body.max_tokens > body.thinking.budget_tokens);
    budgets.push(body.thinking.budget_tokens);
  }
  assert.ok(budgets[0] < budgets[1] && budgets[1] < budgets[2], `budgets grow: ${budgets}`);
});

test("a level the gateway does not list is invalid_input at defineAgent", () => {
  const gateway = openAIChat({ model: "gpt-5", apiKey: "sk-test", fetch: captureFetch().fetch });
  assert.deepEqual(gateway.info.capabilities.reasoningLevels, ["minimal", "low", "medium", "high"]);
  assert.throws(
    () => defineAgent({ id: "a", systemPrompt: "s", gateway, reasoning: { effort: "max" } }),
    (error: unknown) =>
      error instanceof FloretError && error.code === "invalid_input" && /max/.test(error.message),
  );
  const listed = scriptedGateway([], {
    capabilities: { reasoningLevels: ["low"] },
  });
  assert.throws(
    () =>
      defineAgent({ id: "a", systemPrompt: "s", gateway: listed, reasoning: { effort: "high" } }),
    (error: unknown) => error instanceof FloretError && error.code === "invalid_input",
  );
  defineAgent({ id: "a", systemPrompt: "s", gateway: listed, reasoning: { effort: "low" } });
  assert.throws(
    () =>
      defineAgent({
        id: "a",
        systemPrompt: "s",
        gateway: listed,
        reasoning: { effort: "extreme" as ReasoningEffort },
      }),
    (error: unknown) => error instanceof FloretError && error.code === "invalid_input",
  );
});
