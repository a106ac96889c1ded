/**
 * Shallow private copies of turn summaries, as snapshots hand them to hosts
 * (who may change them in place).
 *
 * Why not `{ ...turn }` for all: an ended turn has ten properties, and V8's
 * spread leaves its fast path for objects that size (about 150 ns a copy,
 * against 50 for an object literal). A view copies every turn of the thread,
 * twice per turn when a host sends and waits, so on a long thread that was
 * the largest per-turn cost that grows with history. The common shape — a
 * turn that ended after at least one step, not a retry, without a failure —
 * is copied by a literal with the same properties in the same order as
 * `ViewModel` builds them; every other turn is spread.
 *
 * @module
 */
import type { TurnSummary } from "./view_types.ts";

/**
 * Copies every turn summary (shallow: the same own properties, in the same
 * order, as `{ ...turn }`).
 *
 * @param turns the view's turns
 * @returns new objects, one per turn
 */
export function copyTurns(turns: readonly TurnSummary[]): TurnSummary[] {
  const out = new Array<TurnSummary>(turns.length);
  for (let i = 0; i < turns.length; i++) out[i] = copyTurn(turns[i]);
  return out;
}

/**
 * One turn's copy (shallow, as `{ ...turn }`). The literal's order is `ViewModel`'s: `#turnStarted`
 * (turnId, startedAt, finalItemIds), `#addUsage` (usage), `#turnEnded`
 * (outcome, endedAt, durationMs, then the timeline's facts elapsedMs,
 * waitingMs, workMs, finalItemIds in place). A turn with `retryOf` or
 * `failure` has more keys and is spread. `ViewModel` also stores its ended
 * turns through it, so they share the literal's shape and these reads stay
 * monomorphic (on objects of many shapes they cost more than the spread).
 *
 * @param turn a turn summary
 * @returns its copy
 */
export function copyTurn(turn: TurnSummary): TurnSummary {
  if (
    turn.workMs === undefined || turn.usage === undefined || turn.retryOf !== undefined ||
    turn.failure !== undefined
  ) return { ...turn };
  return {
    turnId: turn.turnId,
    startedAt: turn.startedAt,
    finalItemIds: turn.finalItemIds,
    usage: turn.usage,
    outcome: turn.outcome,
    endedAt: turn.endedAt,
    durationMs: turn.durationMs,
    elapsedMs: turn.elapsedMs,
    waitingMs: turn.waitingMs,
    workMs: turn.workMs,
  };
}
