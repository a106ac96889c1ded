/**
 * Where a compaction cuts: the head (summarised) is everything before the
 * retained tail. The cut never splits a tool call from its result (it falls
 * only on a user or assistant message outside a tool batch) and never falls after the current
 * user input, which therefore always stays verbatim.
 *
 * @module
 */
import type { ContextBudget } from "../../context/budget.ts";
import { CHECKPOINT_ALLOWANCE_TOKENS } from "../../context/budget.ts";
import type { TokenCounter } from "../../context/token_counter.ts";
import type { HistoryMessage } from "../../projection/history/history_message.ts";

/** A planned cut. */
export interface CutPlan {
  /** Index into the projected messages of the first retained message. */
  index: number;
  /** The journal seq of that message: the checkpoint keeps messages from it on. */
  cutSeq: number;
  /** The summarised messages (a previous checkpoint message included). */
  head: HistoryMessage[];
  /** Earlier user inputs from the head, kept verbatim, oldest first. */
  keptInputs: string[];
}

/**
 * Plans the cut for the projected messages of a request.
 *
 * @param messages the request's messages after the system prompt
 * @param current the current user input (the cut never falls after it)
 * @param budget the agent's context numbers
 * @param fixedTokens system prompt and tools, which no compaction can shrink
 * @param counter the agent's token counter
 * @returns the plan, or `undefined` when nothing new can be summarised
 */
export function planCut(
  messages: readonly HistoryMessage[],
  current: HistoryMessage | undefined,
  budget: ContextBudget,
  fixedTokens: number,
  counter: TokenCounter,
): CutPlan | undefined {
  let last = current ? messages.indexOf(current) : messages.length - 1;
  if (last < 0) last = messages.length - 1;
  const candidates: number[] = [];
  for (let i = 1; i <= last; i++) {
    const message = messages[i];
    if (message.position === undefined) continue; // checkpoint or supplemental context
    // Inside a tool batch (results, and answers or steering that arrived while it was
    // open) the position repeats the batch's: the cut may fall only before the batch.
    if (message.position === messages[i - 1].position) continue;
    if (message.message.role === "user" || message.message.role === "assistant") {
      candidates.push(i);
    }
  }
  // The head must hold at least one message that is not already a summary.
  const firstJournaled = messages.findIndex((message) => message.seq !== undefined);
  const usable = candidates.filter((index) => firstJournaled >= 0 && index > firstJournaled);
  if (usable.length === 0) return undefined;

  const size = (message: HistoryMessage): number => message.tokensBy(counter);
  const suffix = new Array<number>(messages.length + 1).fill(0);
  for (let i = messages.length - 1; i >= 0; i--) suffix[i] = suffix[i + 1] + size(messages[i]);
  // The tail should hold at least `retainedTail` tokens (the Go rule), but the compacted
  // request (fixed part, summary at its ceiling, framing, tail) must stay within the target.
  const maxTail = Math.max(
    0,
    budget.target - fixedTokens - budget.summaryCeiling - CHECKPOINT_ALLOWANCE_TOKENS,
  );
  // Walk from the latest cut (smallest tail) back: stop at the first tail that is big
  // enough, or before the first that is too big. The latest cut when even that is too big.
  let index = usable[usable.length - 1];
  for (let k = usable.length - 1; k >= 0; k--) {
    if (suffix[usable[k]] > maxTail) break;
    index = usable[k];
    if (suffix[index] >= budget.retainedTail) break;
  }
  const head = messages.slice(0, index);
  // Verbatim inputs take what the tail left of the room, and at most a quarter of
  // what they replace, so a compaction always saves room.
  let headTokens = 0;
  for (const message of head) headTokens += size(message);
  const keptBudget = Math.min(
    budget.keptInputs,
    Math.max(0, maxTail - suffix[index]),
    Math.floor(headTokens / 4),
  );
  const keptInputs: string[] = [];
  let keptTokens = 0;
  for (let i = head.length - 1; i >= 0; i--) {
    const message = head[i];
    if (message.seq === undefined || message.message.role !== "user") continue;
    if (keptTokens + size(message) > keptBudget) break;
    keptTokens += size(message);
    keptInputs.unshift(message.message.text);
  }
  return { index, cutSeq: messages[index].position!, head, keptInputs };
}
