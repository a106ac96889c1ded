/**
 * Context figures of a thread, as `context()`, `view.context` and observation
 * events report them: the window, the engine's estimate of the next request
 * (after any installed compaction), the last confirmed usage, totals and
 * compaction records.
 *
 * @module
 */
import type { Agent } from "../../config/agent.ts";
import { budgetOf, counterOf } from "../../context/budget.ts";
import { roughCounter } from "../../context/token_counter.ts";
import { projectRequest } from "../../engine/attempt/request_builder.ts";
import type { ContextReader } from "../../projection/history/context_model.ts";
import type { HistoryReader } from "../../projection/history/history_model.ts";
import type { ContextFigures, ThreadView } from "../../projection/view/view_types.ts";

/** The short form carried by `view.context`. */
export function viewContext(
  history: HistoryReader,
  context: ContextReader,
  agent: Agent,
): NonNullable<ThreadView["context"]> {
  const figures: NonNullable<ThreadView["context"]> = {
    windowTokens: budgetOf(agent)?.window ?? 0,
    estimateTokens: projectRequest(agent, history).estimate,
  };
  const confirmed = context.confirmed();
  if (confirmed) figures.confirmed = confirmed;
  return figures;
}

/**
 * The full figures. Without an agent (a host with an agent factory that has
 * not run this thread) the window is 0 and the estimate covers the messages only.
 */
export function contextFigures(
  history: HistoryReader,
  context: ContextReader,
  agent: Agent | undefined,
): ContextFigures {
  let windowTokens = 0;
  let estimateTokens = 0;
  if (agent) {
    ({ windowTokens, estimateTokens } = viewContext(history, context, agent));
  } else {
    for (const message of history.messages("")) estimateTokens += message.tokens;
  }
  const figures: ContextFigures = {
    windowTokens,
    estimateTokens,
    estimator: agent ? counterOf(agent).name : roughCounter.name,
    totals: context.totals(),
    compactions: context.records(),
  };
  const confirmed = context.confirmed();
  if (confirmed) figures.confirmed = confirmed;
  return figures;
}
