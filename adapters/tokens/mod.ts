/**
 * Token counting for provider requests. A separate entry point because the
 * OpenAI encodings (gpt-tokenizer) are large; they load lazily, one encoding
 * at a time, on the first `estimateTokens` call that needs them.
 *
 * @example
 * ```ts
 * import { estimateTokens, roughTokenCount } from "@floret/engine/tokens";
 * const request = { messages: [{ role: "user" as const, text: "Hello" }], tools: [] };
 * const { tokens, tokenizer } = await estimateTokens(request, "claude-sonnet-4-5");
 * console.log(tokens >= roughTokenCount("Hello"), tokenizer); // true "estimate"
 * ```
 *
 * `tokenCounter(model)` gives the same counts piece by piece, for an agent's
 * context thresholds and figures: `defineAgent({ context: { tokenCounter:
 * await tokenCounter("gpt-4.1") } })`.
 *
 * @module
 */
export {
  ESTIMATE_REQUEST_OVERHEAD_TOKENS,
  ESTIMATE_TEXT_RATIO,
  ESTIMATE_TOKENS_PER_MESSAGE,
  ESTIMATE_TOKENS_PER_TOOL,
  ESTIMATE_TOOLS_OVERHEAD_TOKENS,
  estimateTokens,
  IMAGE_TOKENS,
  OPENAI_REPLY_PRIMING_TOKENS,
  OPENAI_TOKENS_PER_MESSAGE,
  TOOL_CALL_OVERHEAD_TOKENS,
} from "./token_estimate.ts";
export type { TokenEstimate } from "./token_estimate.ts";
export { tokenCounter } from "./context_counter.ts";
export type { TokenCounter } from "../../src/context/token_counter.ts";
export { roughTokenCount } from "../../src/provider/rough_token_count.ts";
export { tokenizerForModel } from "./tokenizer_choice.ts";
export type { TokenizerName } from "./tokenizer_choice.ts";

// The engine types this entry's functions take and return, re-exported so its
// documentation is complete on its own (deno doc --lint, JSR); the same types
// as `@floret/engine`.
export type {
  ProviderMessage,
  ProviderRequest,
  ProviderTool,
  ReasoningEffort,
} from "@floret/engine";
