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
import { compactionEvent } from "../context_guard.ts";
import { projectRequest } from "../request_builder.ts";
import type { RunHost } from "../run_loop.ts";
import { compactContext, compactionFailure } from "./compact.ts";

/**
 * Runs one manual compaction as the turn `ids.turnId`.
 *
 * @param agent the thread's agent
 * @param host the thread's side of the run
 * @param ids the run's identity
 */
export async function runCompactionTurn(
  agent: Agent,
  host: RunHost,
  ids: { threadId: string; turnId: string; runId: string },
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
    entry = await compactContext(
      {
        agent,
        budget,
        signal: host.signal,
        observe: (type, detail) => host.observe(type, detail),
        newId: (prefix) => host.newId(prefix),
      },
      projection,
      host.history.currentInput(),
      { turnId: ids.turnId, runId: ids.runId, trigger: "manual" },
    );
  } catch (error) {
    if (host.signal.aborted) return; // cancelled: nothing was installed
    throw error;
  }
  if (!await host.commitCompaction(entry)) return;
  host.observe("compaction", compactionEvent(entry));
  if (entry.status !== "failed") await host.endTurn("completed");
  else await host.endTurn("failed", compactionFailure(entry));
}
