/**
 * The context numbers of one agent: its window, the automatic-compaction
 * threshold, the hard limit a request must stay under, the compaction
 * ceilings and the output budget of each request (DESIGN §7 and §10).
 *
 * @module
 */
import type { Agent } from "../config/agent.ts";
import { guardCounter, roughCounter, type TokenCounter } from "./token_counter.ts";

/** Summary output ceiling, before scaling to the window. */
export const SUMMARY_CEILING_TOKENS = 20_000;
/** Context size below which manual compaction is a no-op, before scaling. */
export const COMPACTION_TARGET_TOKENS = 50_000;
/** Verbatim tail kept after a compaction, before scaling. */
export const RETAINED_TAIL_TOKENS = 12_000;
/** Earlier user inputs kept verbatim with the summary, before scaling. */
export const KEPT_INPUT_TOKENS = 15_000;
/** Room for the checkpoint message's own framing. */
export const CHECKPOINT_ALLOWANCE_TOKENS = 2_000;
/** Automatic compaction starts when the request reaches this share of the window. */
export const AUTO_COMPACT_RATIO = 0.9;
/** Consecutive failed automatic compactions after which no automatic summary is requested. */
export const MAX_CONSECUTIVE_COMPACTION_FAILURES = 2;

/** The context numbers for one agent; every field is a whole number of tokens. */
export interface ContextBudget {
  /** W: the effective window. */
  window: number;
  /** An explicit per-request output budget, sent unchanged. */
  maxOutputTokens?: number;
  /** The model's own output limit. */
  modelMaxOutputTokens?: number;
  /** T: automatic compaction when the projected request reaches it. */
  threshold: number;
  /** H: a request at or above it is never sent. */
  hardLimit: number;
  /** Output ceiling of the summary request. */
  summaryCeiling: number;
  /** Verbatim tail wanted after a compaction. */
  retainedTail: number;
  /** Earlier user inputs kept verbatim. */
  keptInputs: number;
  /** Below this, manual compaction is a no-op. */
  target: number;
}

/** Output reserve the window keeps free when no explicit budget is set. */
function reserveOf(window: number): number {
  return Math.min(Math.floor(window / 100), 4096);
}

/**
 * The context numbers of an agent, or `undefined` when neither the agent nor
 * its gateway knows the window (then nothing is budgeted or compacted).
 */
export function budgetOf(agent: Agent): ContextBudget | undefined {
  const window = agent.context.windowTokens ??
    agent.gateway.info?.capabilities?.contextWindowTokens;
  if (window === undefined || !(window > 0)) return undefined;
  const explicit = agent.context.maxOutputTokens;
  const cap = agent.context.modelMaxOutputTokens ??
    agent.gateway.info?.capabilities?.maxOutputTokens;
  const hardLimit = explicit !== undefined ? window - explicit : window - reserveOf(window);
  const threshold = Math.min(Math.floor(window * AUTO_COMPACT_RATIO), hardLimit);
  const quarter = Math.floor(window / 4);
  const budget: ContextBudget = {
    window,
    threshold,
    hardLimit,
    // Never more than the model can write in one response: a summary request
    // asking for more is refused by models with small output caps.
    summaryCeiling: Math.min(SUMMARY_CEILING_TOKENS, quarter, cap ?? Infinity),
    retainedTail: Math.min(RETAINED_TAIL_TOKENS, quarter),
    keptInputs: Math.min(KEPT_INPUT_TOKENS, quarter),
    target: Math.min(COMPACTION_TARGET_TOKENS, threshold),
  };
  if (explicit !== undefined) budget.maxOutputTokens = explicit;
  if (cap !== undefined) budget.modelMaxOutputTokens = cap;
  return budget;
}

/**
 * The `maxOutputTokens` a request carries: an explicit budget unchanged;
 * otherwise, with a known output cap, what is left of the window after the
 * input and the reserve (at least 1); otherwise none.
 */
export function outputBudget(
  budget: ContextBudget | undefined,
  agent: Agent,
  projectedInput: number,
): number | undefined {
  if (agent.context.maxOutputTokens !== undefined) return agent.context.maxOutputTokens;
  if (!budget || budget.modelMaxOutputTokens === undefined) return undefined;
  const room = budget.window - projectedInput - reserveOf(budget.window);
  return Math.max(1, Math.min(budget.modelMaxOutputTokens, room));
}

const guarded = new WeakMap<TokenCounter, TokenCounter>();

/**
 * The counter that sizes an agent's requests: its own `context.tokenCounter`
 * (guarded, and the same object on every call, so per-message caches hold),
 * else the engine's rough count.
 */
export function counterOf(agent: Agent): TokenCounter {
  const own = agent.context.tokenCounter;
  if (!own) return roughCounter;
  let counter = guarded.get(own);
  if (!counter) {
    counter = guardCounter(own);
    guarded.set(own, counter);
  }
  return counter;
}
