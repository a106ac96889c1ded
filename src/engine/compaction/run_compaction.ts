/**
 * One compaction inside a run, automatic or manual: the operation itself,
 * then its record committed (installing the checkpoint when it compacted) and
 * observed. Both the context guard and the compaction-only turn go through
 * here, so the two kinds cannot drift apart.
 *
 * @module
 */
import type { Agent } from "../../config/agent.ts";
import type { ContextBudget } from "../../context/budget.ts";
import type { CompactionTrigger } from "../../journal/entries.ts";
import { recordOf } from "../../projection/history/context_model.ts";
import type { Projection } from "../attempt/request_builder.ts";
import type { RunHost } from "../run/run_loop.ts";
import { compactContext, type NewCompaction } from "./compact.ts";

/**
 * Runs, commits and observes one compaction of the request `projection`.
 *
 * An automatic no-op (nothing to summarise yet) made no request: it leaves
 * no record, so a long first turn does not fill the records with one per
 * step. A manual one is the operation's outcome and is recorded.
 *
 * @param agent the run's agent
 * @param host the thread's side of the run
 * @param budget the agent's context budget
 * @param projection the request as it would be sent now
 * @param record the turn and run the record belongs to, what triggered it, and the
 *   operation when its start is already committed
 * @returns the record, or `undefined` when the run lost the thread
 * @throws the signal's reason when the run was stopped during the summary request
 */
export async function runCompaction(
  agent: Agent,
  host: RunHost,
  budget: ContextBudget,
  projection: Projection,
  record: { turnId: string; runId: string; trigger: CompactionTrigger; operationId?: string },
): Promise<NewCompaction | undefined> {
  const entry = await compactContext(
    {
      agent,
      budget,
      signal: host.signal,
      begin: (start) => host.commitEntries([start], []),
      observe: (type, detail) => host.observe(type, detail),
      newId: (prefix) => host.newId(prefix),
      labels: host.labels,
    },
    projection,
    host.history.currentInput(),
    record,
  );
  if (!entry) return undefined;
  if (entry.status === "noop" && record.trigger !== "manual") return entry;
  if (!await host.commitCompaction(entry)) return undefined;
  host.observe("compaction", { ...recordOf(entry) });
  return entry;
}
