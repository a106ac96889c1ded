/**
 * A resumed retry's first work: the `none`/`read` calls that a crash cut off
 * run again before the model is asked anything (DESIGN §11 "Spawn after a
 * crash"). Such calls change nothing outside the engine, or are keyed by
 * their call id (a spawn returns the same child), so running them again is
 * safe; the model then reads their real results instead of being told they
 * were interrupted. Side-effecting calls are never here: a crash leaves them
 * `unknown` and the turn cannot be retried.
 *
 * @module
 */
import type { Agent } from "../../config/agent.ts";
import type { NewEntry, ToolOutcome } from "../../journal/entries.ts";
import type { InterruptedCall } from "../../projection/open_calls.ts";
import { needsDispatchMarker } from "../../tools/define_tool.ts";
import {
  observeDispatched,
  observeOpened,
  observeResults,
  planApproved,
  settleBatch,
} from "./batch_settlement.ts";
import { openForInputs } from "./interaction_plan.ts";
import type { RunHost } from "../run/run_loop.ts";
import { settledBatch } from "./settled_batch.ts";
import type { PlannedCall } from "./tool_calls.ts";
import { runBatch } from "./tool_runner.ts";

/**
 * Runs the thread's interrupted calls again and commits their results in
 * this turn, each entry naming the turn whose step made the calls, so they
 * replace the interrupted results in the model's history and in the view.
 * A call whose tool is gone, whose arguments no longer validate or whose tool
 * now has a side effect is left as it was: the model reads it as interrupted.
 *
 * @param agent the turn's agent
 * @param host the thread's side of the run
 * @param ids the run's identity
 * @returns `continue` when the first request may go, `return` when the run must stop
 */
export async function rerunInterrupted(
  agent: Agent,
  host: RunHost,
  ids: { threadId: string; turnId: string; runId: string },
): Promise<"continue" | "return"> {
  const sources: InterruptedCall[] = [];
  const planned: PlannedCall[] = [];
  for (const call of host.openCalls.interrupted()) {
    const plan = planApproved(agent, call);
    if (!plan.tool || plan.record.invalid || needsDispatchMarker(plan.tool.effect)) continue;
    sources.push(call);
    planned.push(plan);
  }
  if (planned.length === 0) return "continue";
  host.progress("tools", 0);
  const started = observeDispatched(host, planned);
  const settling = settledBatch(
    host,
    runBatch(
      planned,
      { threadId: ids.threadId, turnId: ids.turnId, runId: ids.runId, signal: host.toolSignal },
      () => host.newId("artifact"),
    ),
  );
  const { outcomes, artifacts, inputs, rejectedActivity } = settling instanceof Promise
    ? await settling
    : settling;
  const entries: NewEntry[] = resultEntries(ids.turnId, sources, outcomes);
  entries.push(...openForInputs(inputs, { ...ids, newId: (prefix) => host.newId(prefix) }));
  if (!await host.commitEntries(entries, artifacts)) return "return";
  observeResults(host, outcomes, started);
  observeOpened(host, entries);
  for (const rejected of rejectedActivity) host.observe("tool.activity_rejected", rejected);
  if (outcomes.some((outcome) => outcome.status === "unknown")) {
    await host.endTurn("failed", {
      code: "effect_outcome_unknown",
      message: "A tool reported that its side effect may or may not have happened",
    });
    return "return";
  }
  // A re-run that asked the user for input waits for the answer like any batch.
  return inputs.length > 0 ? settleBatch(agent, host, ids) : "continue";
}

/**
 * One `tool_results` entry per step the calls came from (in practice one: a
 * crash cuts off a single batch), in this turn and naming the source turn.
 */
function resultEntries(
  turnId: string,
  sources: readonly InterruptedCall[],
  outcomes: readonly ToolOutcome[],
): NewEntry[] {
  const entries: (NewEntry & { kind: "tool_results" })[] = [];
  outcomes.forEach((outcome, index) => {
    const source = sources[index];
    let entry = entries.find((e) => e.runId === source.runId && e.ofTurnId === source.turnId);
    if (!entry) {
      entry = {
        kind: "tool_results",
        turnId,
        runId: source.runId,
        ofTurnId: source.turnId,
        results: [],
      };
      entries.push(entry);
    }
    entry.results.push(outcome);
  });
  return entries;
}
