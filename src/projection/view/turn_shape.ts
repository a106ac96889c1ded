/**
 * One object shape for ended turn summaries.
 *
 * Why: every view copies every turn of the thread (`{ ...turn }`, twice per
 * turn when a host sends and waits). Built by spreads, `Object.assign` and
 * added fields, ended turns took many hidden shapes, and the copy left V8's
 * fast path: about 180 ns a turn, 90 us a view at 500 turns, the largest
 * per-turn cost that grew with history. `ViewModel` now stores each ended turn
 * through `copyTurn`, which rebuilds the common shape — ended after at least
 * one step, not a retry, no failure — with one object literal; the views'
 * spread of 500 such turns costs about a third.
 *
 * @module
 */
import type { TurnSummary } from "./view_types.ts";

/**
 * One turn's copy (shallow, as `{ ...turn }`). The literal's order is `ViewModel`'s: `#turnStarted`
 * (turnId, startedAt, finalItemIds), `#addUsage` (usage), `#turnEnded`
 * (outcome, endedAt, durationMs, then the timeline's facts elapsedMs,
 * waitingMs, workMs, finalItemIds in place). A turn with `retryOf` or
 * `failure` has more keys and is spread.
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
