/**
 * Planning a turn's terminal commit: the `turn_ended` entry, the record's new
 * status, and — when a completed turn leaves queued input — the admission of
 * the next turn in the same commit, so no one ever sees the thread idle in
 * between.
 *
 * @module
 */
import type { NewEntry, TurnFailure, TurnOutcome } from "../journal/entries.ts";
import type { ThreadRecord } from "../journal/thread_record.ts";

/** The next queued input to admit with a completed turn's end. */
export interface HandOver {
  turnId: string;
  runId: string;
  agentId: string;
}

/**
 * Plans the end of the active turn.
 *
 * @returns the new record and the entries to commit after the caller's own
 */
export function planTurnEnd(
  record: ThreadRecord,
  end: { turnId: string; runId?: string; outcome: TurnOutcome; failure?: TurnFailure },
  handOver?: HandOver,
): { record: ThreadRecord; entries: NewEntry[] } {
  const now = new Date().toISOString();
  const ended: NewEntry = { kind: "turn_ended", turnId: end.turnId, outcome: end.outcome };
  if (end.runId) ended.runId = end.runId;
  if (end.failure) ended.failure = end.failure;
  const entries: NewEntry[] = [ended];
  const next: ThreadRecord = {
    ...record,
    updatedAt: now,
    status: "idle",
    active: undefined,
    lastTurn: {
      turnId: end.turnId,
      outcome: end.outcome,
      retryable: end.failure?.code !== "effect_outcome_unknown",
    },
  };
  delete next.active;
  const queued = record.queue[0];
  if (handOver && end.outcome === "completed" && queued) {
    next.queue = record.queue.slice(1);
    next.status = "running";
    next.active = { turnId: handOver.turnId, runId: handOver.runId };
    next.lastTurn = { turnId: handOver.turnId, retryable: true };
    const started: NewEntry = {
      kind: "turn_started",
      turnId: handOver.turnId,
      runId: handOver.runId,
      agentId: handOver.agentId,
      requestKey: queued.requestKey,
      input: queued.input,
    };
    if (queued.supplementalContext) started.supplementalContext = queued.supplementalContext;
    entries.push(started);
  }
  return { record: next, entries };
}
