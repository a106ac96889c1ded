/**
 * Ending a turn: the `turn_ended` entry and the record's new status, planned
 * here for every way a turn ends (its run finishing, a cancel, a crash). A run
 * that completes its turn while input is queued hands over to the next turn in
 * the same commit, so no one ever sees the thread idle in between.
 *
 * @module
 */
import { nowIso } from "../../journal/now_iso.ts";
import type { NewEntry, TurnFailure, TurnOutcome } from "../../journal/entries.ts";
import type { ThreadRecord } from "../../journal/thread_record.ts";
import type { ActiveRun } from "../actor/active_run.ts";
import type { ThreadActor } from "../actor/thread_actor.ts";
import { STOPPED, unfinishedCompactions } from "./unfinished_compactions.ts";
import {
  admitTurn,
  type AgentResolver,
  type PreparedTurn,
  prepareTurn,
  queuedAdmission,
} from "./turn_admission.ts";

/** How a turn ends. */
export interface TurnEnd {
  turnId: string;
  runId?: string;
  outcome: TurnOutcome;
  failure?: TurnFailure;
}

/**
 * Plans the end of the active turn.
 *
 * @returns the new record and the entries to commit after the caller's own
 */
export function planTurnEnd(
  record: ThreadRecord,
  end: TurnEnd,
): { record: ThreadRecord; entries: NewEntry[] } {
  const ended: NewEntry = { kind: "turn_ended", turnId: end.turnId, outcome: end.outcome };
  if (end.runId) ended.runId = end.runId;
  if (end.failure) ended.failure = end.failure;
  // Without the turn's active and waiting marks, taken out by the rest pattern rather than
  // deleted afterwards: a delete leaves the record in dictionary mode, and every copy of it
  // (the commit's own, then each command's) and its JSON text would take the slow path.
  // The same keys in the same order as the spread with those fields deleted.
  const { active: _active, waiting: _waiting, ...next }: ThreadRecord = record;
  next.updatedAt = nowIso();
  next.status = "idle";
  next.lastTurn = {
    turnId: end.turnId,
    outcome: end.outcome,
    // A compaction-only turn has nothing to retry; nor has a turn a restore stopped.
    retryable: end.failure?.code !== "effect_outcome_unknown" &&
      end.failure?.code !== "restored_turn" && record.lastTurn?.retryable !== false,
  };
  if (end.failure) next.lastTurn.code = end.failure.code;
  return { record: next, entries: [ended] };
}

/**
 * Commits the end of a run's turn, with `entries` (its last step) first. A
 * completed turn with queued input admits the first queued input in the same
 * commit; if that turn's agent cannot be had, the turn just ends and the
 * input stays queued. Call inside the actor's lock, while the run owns it.
 *
 * @param onHandOverFailed told why the queued input could not start
 * @returns the next turn's run, now the actor's, if one was handed over
 * @throws {StaleThreadError} when another writer got there first
 */
export async function endTurn(
  resolver: AgentResolver,
  actor: ThreadActor,
  end: TurnEnd,
  entries: NewEntry[],
  onHandOverFailed: (error: unknown) => void,
): Promise<ActiveRun | undefined> {
  // A run that ends its turn while a compaction is open (it failed inside it) records it.
  const stopped = unfinishedCompactions(actor, end.turnId, STOPPED.ended);
  const ending = endingOf(end, entries, stopped);
  const queued = end.outcome === "completed" ? actor.record.queue[0] : undefined;
  let next: PreparedTurn | undefined;
  if (queued) {
    try {
      next = await prepareTurn(resolver, actor.threadId, queued.input, actor.record);
    } catch (error) {
      onHandOverFailed(error);
    }
  }
  if (queued && next) {
    return await admitTurn(
      resolver,
      actor,
      { ...queuedAdmission(queued, actor), after: ending },
      next,
    );
  }
  const { record, entries: ended } = ending(actor.record);
  // Every entry here was made for this commit alone (the run's last step, as its other
  // steps are, and the records planned just now): stamped in place, not copied.
  // A commit that lands in this tick (a synchronous store) is not awaited.
  const landed = actor.commitLanded({ record, entries: ended, fresh: true, ownRecord: true });
  if (landed instanceof Promise) await landed;
  return undefined;
}

/**
 * Plans a turn's end on the record it is given, after the run's last step
 * and the compactions it stopped. Made here, not
 * as a named arrow in `endTurn`: under tsx (esbuild keepNames) a named arrow
 * is wrapped to name it, which every turn would pay.
 */
function endingOf(
  end: TurnEnd,
  entries: NewEntry[],
  stopped: NewEntry[],
): (record: ThreadRecord) => { record: ThreadRecord; entries: NewEntry[] } {
  return (record) => {
    const planned = planTurnEnd(record, end);
    return { record: planned.record, entries: [...entries, ...stopped, ...planned.entries] };
  };
}
