/**
 * The run of a compaction-only turn (manual `compact`): one compaction of
 * the thread's context as the next request would carry it, then the turn
 * ends — completed when the checkpoint was installed (or nothing could be
 * summarised), failed otherwise.
 *
 * @module
 */
import type { Agent } from "../../config/agent.ts";
import { budgetOf } from "../../context/budget.ts";
import { projectRequest } from "../attempt/request_builder.ts";
import type { RunHost } from "../run/run_loop.ts";
import { compactionFailure } from "./compact.ts";
import { runCompaction } from "./run_compaction.ts";

/**
 * Runs one manual compaction as the turn `ids.turnId`.
 *
 * @param agent the thread's agent
 * @param host the thread's side of the run
 * @param ids the run's identity, and the operation its admission started
 * @param then the work that follows a compaction that did not fail, in the same turn
 */
export async function runCompactionTurn(
  agent: Agent,
  host: RunHost,
  ids: { threadId: string; turnId: string; runId: string; operationId: string },
  then?: (host: RunHost) => Promise<void>,
): Promise<void> {
  const budget = budgetOf(agent);
  if (!budget) {
    await host.endTurn("failed", {
      code: "model_context_unavailable",
      message: "The agent's context window is unknown",
    });
    return;
  }
  const projection = projectRequest(agent, host.history);
  let entry;
  try {
    entry = await runCompaction(agent, host, budget, projection, {
      turnId: ids.turnId,
      runId: ids.runId,
      trigger: "manual",
      operationId: ids.operationId,
    });
  } catch (error) {
    // Cancelled: nothing was installed, and the cancel wrote the operation's failed record.
    if (host.signal.aborted) return;
    throw error;
  }
  if (!entry) return;
  // `continueGoal`: the turn goes on with the goal once the compaction did not fail.
  if (entry.status !== "failed" && then) return await then(host);
  if (entry.status !== "failed") await host.endTurn("completed");
  else await host.endTurn("failed", compactionFailure(entry));
}
