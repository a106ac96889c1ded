/**
 * A token counter for an agent's context (`defineAgent({ context: {
 * tokenCounter } })`): the same counts as `estimateTokens`, piece by piece
 * and synchronous, once the model's encoding has loaded.
 *
 * @module
 */
import type { TokenCounter } from "../../src/context/token_counter.ts";
import type { ProviderMessage, ProviderTool } from "../../src/provider/gateway.ts";
import { openAIToolText } from "./openai_tool_text.ts";
import {
  ESTIMATE_REQUEST_OVERHEAD_TOKENS,
  ESTIMATE_TEXT_RATIO,
  ESTIMATE_TOKENS_PER_MESSAGE,
  estimateToolTokens,
  IMAGE_TOKENS,
  OPENAI_REPLY_PRIMING_TOKENS,
  OPENAI_TOKENS_PER_MESSAGE,
  sumTokens,
  type Tally,
  tallyMessage,
} from "./token_estimate.ts";
import { tokenizerForModel } from "./tokenizer_choice.ts";
import { loadTokenCounter } from "./tokenizer_loader.ts";

/**
 * Loads the counter for a model: exact for OpenAI families (their public
 * encodings, chat framing and tool rendering), conservative for every other
 * model (o200k tokens × `ESTIMATE_TEXT_RATIO` plus allowances). Summed over a
 * request it gives `estimateTokens`' figure (never less: the estimate rounds
 * up per message).
 *
 * @param model the model name, e.g. `gpt-4.1` or `claude-sonnet-4-5`
 * @returns a synchronous counter; its `name` is the tokenizer behind it
 * @throws when `gpt-tokenizer` is not installed (the error says what to install)
 * @example
 * ```ts
 * import { defineAgent } from "@floret/engine";
 * import { scriptedGateway } from "@floret/engine/testing";
 * import { tokenCounter } from "@floret/engine/tokens";
 * const agent = defineAgent({
 *   id: "helper",
 *   systemPrompt: "Be brief.",
 *   gateway: scriptedGateway([{ text: "Hi" }]),
 *   context: { windowTokens: 128_000, tokenCounter: await tokenCounter("gpt-4.1") },
 * });
 * ```
 */
export async function tokenCounter(model: string): Promise<TokenCounter> {
  const tokenizer = tokenizerForModel(model);
  const exact = tokenizer !== "estimate";
  const count = await loadTokenCounter(exact ? tokenizer : "o200k_base");
  const scaled = (tokens: number): number =>
    exact ? tokens : Math.ceil(tokens * ESTIMATE_TEXT_RATIO);
  return Object.freeze({
    name: tokenizer,
    requestOverhead: exact ? OPENAI_REPLY_PRIMING_TOKENS : ESTIMATE_REQUEST_OVERHEAD_TOKENS,
    text: (text: string): number => scaled(count(text)),
    message(message: ProviderMessage): number {
      const tally: Tally = { text: [], framing: 0, imageCount: 0 };
      tallyMessage(
        message,
        tally,
        exact ? OPENAI_TOKENS_PER_MESSAGE : ESTIMATE_TOKENS_PER_MESSAGE,
      );
      return scaled(sumTokens(count, tally.text)) + tally.framing +
        tally.imageCount * IMAGE_TOKENS;
    },
    tools(tools: readonly ProviderTool[]): number {
      if (tools.length === 0) return 0;
      // The engine's requests always open with a system message, which OpenAI
      // extends with the rendered tools after a one-token separator.
      return exact ? count(openAIToolText(tools)) + 1 : estimateToolTokens(count, tools);
    },
  });
}
