/**
 * Compactions left without a record: a `compaction_started` entry is
 * committed before the summary request, so whoever ends the turn some other
 * way (a cancel, recovery after a crash, a restore, a run that failed, a fork
 * cut inside the turn) writes
 * the `failed` record the operation never wrote. Each operation leaves one
 * record.
 *
 * @module
 */
import { nowIso } from "../../journal/now_iso.ts";
import type { CompactionStartedEntry, NewEntry } from "../../journal/entries.ts";
import type { ObservationEvent } from "../../observation/events.ts";
import { recordOf } from "../../projection/history/context_model.ts";
import type { ThreadActor } from "../actor/thread_actor.ts";

/** Why an operation stopped before it finished, by the way its turn stopped (no prompt text). */
export const STOPPED = {
  cancelled: "The compaction was cancelled before it finished",
  interrupted: "The compaction was interrupted before it finished: its process stopped",
  restored: "The compaction was stopped by a restore from a backup before it finished",
  ended: "The compaction's turn ended before the compaction finished",
  forked: "The fork was cut while the compaction ran",
} as const;

/**
 * The `failed` records of the turn's compactions that were started and never
 * finished: each operation leaves one record, even one that was stopped.
 *
 * @param actor the thread (inside its lock)
 * @param turnId the turn being settled
 * @param reason why they stopped (no prompt text)
 */
export function unfinishedCompactions(
  actor: ThreadActor,
  turnId: string,
  reason: string,
): NewEntry[] {
  return actor.contextReader.unfinished(turnId).map((started) => stoppedRecord(started, reason));
}

/**
 * The `failed` record of one operation that was started and stopped before
 * it finished; the circuit breaker does not count it.
 *
 * @param started the operation's start
 * @param reason why it stopped (no prompt text)
 */
export function stoppedRecord(
  started: Omit<CompactionStartedEntry, "seq" | "at">,
  reason: string,
): NewEntry {
  const entry: NewEntry = {
    kind: "compaction",
    turnId: started.turnId,
    operationId: started.operationId,
    trigger: started.trigger,
    status: "failed",
    tokensBefore: started.tokensBefore,
    reason,
    interrupted: true,
  };
  if (started.runId !== undefined) entry.runId = started.runId;
  return entry;
}

/**
 * Emits the `compaction` event of each stopped record among committed
 * entries, as the run would have for a record of its own: figures only.
 *
 * @param observe the host's observer
 * @param threadId the thread the entries were committed to
 * @param entries what was committed
 */
export function observeStopped(
  observe: (event: ObservationEvent) => void,
  threadId: string,
  entries: readonly NewEntry[] | undefined,
): void {
  for (const entry of entries ?? []) {
    if (entry.kind !== "compaction" || !entry.interrupted) continue;
    const at = nowIso();
    const event: ObservationEvent = {
      type: "compaction",
      threadId,
      turnId: entry.turnId,
      at,
      ...recordOf(entry),
    };
    if (entry.runId !== undefined) event.runId = entry.runId;
    observe(event);
  }
}
