/**
 * How the built-in gateways send an agent's reasoning effort: OpenAI's two
 * APIs take a level by name, Anthropic takes a thinking budget in tokens.
 *
 * @module
 */
import type { Capabilities, ReasoningEffort } from "../../src/provider/gateway.ts";

/** The levels OpenAI's reasoning models take by name ("max" is their `xhigh`, which few models have). */
export const OPENAI_REASONING_LEVELS: readonly ReasoningEffort[] = Object.freeze([
  "minimal",
  "low",
  "medium",
  "high",
]);

/** Anthropic's extended thinking takes any budget of at least 1024 tokens: every level maps. */
export const ANTHROPIC_REASONING_LEVELS: readonly ReasoningEffort[] = Object.freeze([
  "minimal",
  "low",
  "medium",
  "high",
  "max",
]);

/** Thinking budget tokens per level (Anthropic's smallest budget is 1024). */
export const ANTHROPIC_THINKING_BUDGETS: Readonly<Record<ReasoningEffort, number>> = Object
  .freeze({
    minimal: 1024,
    low: 4096,
    medium: 10_000,
    high: 20_000,
    max: 32_000,
  });

/**
 * Fills `reasoningLevels` when the host did not say which levels the model takes.
 *
 * @param capabilities the gateway's capabilities, changed in place
 * @param levels the levels this gateway can send, or undefined when unknown
 */
export function defaultReasoningLevels(
  capabilities: Capabilities,
  levels: readonly ReasoningEffort[] | undefined,
): void {
  // A model declared without reasoning gets no levels to choose from.
  if (capabilities.reasoning === "unsupported") return;
  if (capabilities.reasoningLevels === undefined && levels !== undefined) {
    capabilities.reasoningLevels = [...levels];
  }
}

/**
 * The OpenAI name of a level (Chat Completions `reasoning_effort`, Responses `reasoning.effort`).
 *
 * @param effort the agent's level
 * @returns the wire value
 */
export function openAIEffort(effort: ReasoningEffort): string {
  return effort === "max" ? "xhigh" : effort;
}

/**
 * Anthropic's `thinking` block for a level, and the `max_tokens` that leaves
 * room for the answer after the thinking (the API wants `max_tokens` above
 * the budget).
 *
 * @param effort the agent's level
 * @param answerTokens the output budget the request had without thinking
 * @param modelMax the model's output limit, when known
 * @returns the thinking block and the request's new `max_tokens`
 */
export function anthropicThinking(
  effort: ReasoningEffort,
  answerTokens: number,
  modelMax: number | undefined,
): { thinking: { type: "enabled"; budget_tokens: number }; maxTokens: number } {
  let budget = ANTHROPIC_THINKING_BUDGETS[effort];
  let maxTokens = budget + answerTokens;
  if (modelMax !== undefined && maxTokens > modelMax) {
    maxTokens = Math.max(modelMax, 2048);
    // Half the room for thinking at least, never under the API's minimum budget.
    budget = Math.max(1024, Math.min(budget, maxTokens - Math.max(1024, answerTokens >> 1)));
    if (budget >= maxTokens) budget = maxTokens - 1;
  }
  return { thinking: { type: "enabled", budget_tokens: budget }, maxTokens };
}
