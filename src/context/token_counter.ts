/**
 * The token counter SPI: how the engine sizes a request for its context
 * thresholds, its compaction plan and the figures of `context()`. The core
 * ships the tokenizer-free {@link roughCounter}; `tokenCounter(model)` of
 * `@floret/engine/tokens` loads an exact (OpenAI) or conservative counter an
 * agent can take as `context.tokenCounter`, so the core never loads a
 * tokenizer itself.
 *
 * @module
 */
import { canonicalJson } from "../identity/canonical_json.ts";
import type { ProviderMessage, ProviderTool } from "../provider/gateway.ts";
import { roughTokenCount } from "../provider/rough_token_count.ts";
import { messageTokens, REQUEST_OVERHEAD_TOKENS, toolTokens } from "./token_count.ts";

/**
 * Counts the input tokens of a request, piece by piece. Every method is
 * synchronous: the engine sizes each request on every step, and caches the
 * count of each message per counter.
 */
export interface TokenCounter {
  /** Names the method, e.g. `"rough"`, `"o200k_base"` or `"estimate"`. */
  readonly name: string;
  /** Tokens a request costs once, whatever it holds (reply priming and the like). */
  readonly requestOverhead: number;
  /** Tokens of plain text (summary ceilings, summary batches). */
  text(text: string): number;
  /** Tokens of one message, its framing included. */
  message(message: ProviderMessage): number;
  /** Tokens of a request's tool definitions, framing included; 0 for none. */
  tools(tools: readonly ProviderTool[]): number;
}

/**
 * The engine's default counter: no tokenizer, so it costs nothing to load,
 * and it leans high on prose (see `roughTokenCount`).
 */
export const roughCounter: TokenCounter = Object.freeze({
  name: "rough",
  requestOverhead: REQUEST_OVERHEAD_TOKENS,
  text: roughTokenCount,
  message: messageTokens,
  tools(tools: readonly ProviderTool[]): number {
    return toolTokens(tools, canonicalJson(tools));
  },
});

/** A count is usable when it is a finite, non-negative number; it is rounded up. */
function usable(count: unknown): number | undefined {
  return typeof count === "number" && Number.isFinite(count) && count >= 0
    ? Math.ceil(count)
    : undefined;
}

/**
 * Wraps host code so a broken counter cannot break a run or a query: a piece
 * it throws on, or counts as anything but a finite non-negative number, is
 * counted by {@link roughCounter} instead.
 *
 * @param counter the host's counter
 * @returns a counter that always answers
 */
export function guardCounter(counter: TokenCounter): TokenCounter {
  const attempt =
    <T>(count: (value: T) => unknown, fallback: (value: T) => number) => (value: T): number => {
      try {
        return usable(count.call(counter, value)) ?? fallback(value);
      } catch {
        return fallback(value);
      }
    };
  return Object.freeze({
    name: counter.name,
    requestOverhead: usable(counter.requestOverhead) ?? roughCounter.requestOverhead,
    text: attempt<string>(counter.text, roughCounter.text),
    message: attempt<ProviderMessage>(counter.message, roughCounter.message),
    tools: attempt<readonly ProviderTool[]>(counter.tools, roughCounter.tools),
  });
}
