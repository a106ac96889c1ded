/**
 * Which run received a secret answer. Secret values live only in memory: in
 * the run that `respond` resumed or, when no run of the turn was alive, held
 * by the thread until the next run of that turn starts (the first run
 * admitted after the answer). A secret whose run stopped with the process,
 * or that no run ever received, must be asked again; one whose run ended
 * normally is not.
 *
 * @module
 */
import type { InteractionState } from "../../projection/interactions.ts";

/** Answered questions with at least one secret answer, not asked again yet, of one turn. */
export function secretAnswersOf(
  all: readonly InteractionState[],
  turnId: string,
): InteractionState[] {
  const ofTurn = all.filter((state) => state.turnId === turnId);
  const reasked = new Set(ofTurn.map((state) => state.reaskOf).filter((id) => id !== undefined));
  return ofTurn.filter((state) =>
    state.resolution?.type === "answers" && state.resolution.redacted.length > 0 &&
    !reasked.has(state.id)
  );
}

/**
 * The run that received `secret`'s values: the run it was resolved for, or
 * the first run of its turn admitted after it; `undefined` when none was.
 *
 * @param all every interaction of the thread
 * @param secret an answered question with secret answers
 */
export function secretRunOf(
  all: readonly InteractionState[],
  secret: InteractionState,
): string | undefined {
  if (secret.resolvedForRun !== undefined) return secret.resolvedForRun;
  const after = secret.resolvedSeq ?? Number.POSITIVE_INFINITY;
  let first: InteractionState | undefined;
  for (const state of all) {
    // A run of a waiting turn is admitted only by the respond that wakes it.
    if (state.turnId !== secret.turnId || state.resolvedForRun === undefined) continue;
    if ((state.resolvedSeq ?? 0) <= after) continue;
    if (!first || state.resolvedSeq! < first.resolvedSeq!) first = state;
  }
  return first?.resolvedForRun;
}
