/**
 * Ending an active turn that its run will not finish: after a cancel, a crash
 * or a failed run. Each call without a result is settled honestly (`unknown`
 * when its side effect may have happened, otherwise `cancelled`), and the turn
 * fails with `effect_outcome_unknown` if any call is `unknown`.
 *
 * @module
 */
import type { NewEntry, TurnFailure, TurnOutcome } from "../journal/entries.ts";
import { settleOpenCalls } from "../projection/open_calls.ts";
import type { ActorChange, ThreadActor } from "./thread_actor.ts";
import { planTurnEnd } from "./turn_end.ts";

/**
 * Settles a turn that is active in the journal but whose run is gone: it
 * died here on a store failure, or its host's lease lapsed. A turn running
 * on another live host is left alone. Call inside the actor's lock.
 *
 * @throws {StaleThreadError} when another writer got there first
 */
export async function settleOrphan(actor: ThreadActor): Promise<void> {
  if (!actor.abandoned) return;
  const change = planSettlement(actor, "interrupted");
  if (change) await actor.commit(change);
}

/**
 * Plans the commit that ends the actor's active turn.
 *
 * @param actor the thread (inside its lock)
 * @param clean the outcome when no side effect is in doubt: `cancelled` or `interrupted`;
 *   `restored` (a restore stops the turn) is always `interrupted` with `restored_turn`
 * @param partial text a cancelled step had streamed, kept for people
 * @returns the change, or `undefined` when no turn is active
 */
export function planSettlement(
  actor: ThreadActor,
  clean: "cancelled" | "interrupted" | "restored",
  partial?: { step: number; text: string; reasoning: string },
): ActorChange | undefined {
  const active = actor.record.active;
  if (!active) return undefined;
  const entries: NewEntry[] = [];
  if (partial && (partial.text || partial.reasoning)) {
    const step: NewEntry = {
      kind: "step",
      turnId: active.turnId,
      runId: active.runId,
      step: partial.step,
      text: partial.text,
      calls: [],
      finish: "stop",
      partial: true,
      stateKey: "",
    };
    if (partial.reasoning) step.reasoning = partial.reasoning;
    entries.push(step);
  }
  const open = actor.openCalls.list();
  const { results, unknown } = settleOpenCalls(open);
  if (results.length > 0) {
    entries.push({ kind: "tool_results", turnId: active.turnId, runId: open[0].runId, results });
  }
  let outcome: TurnOutcome = clean === "restored" ? "interrupted" : clean;
  let failure: TurnFailure | undefined;
  if (clean === "restored") {
    failure = {
      code: "restored_turn",
      message: "The turn was stopped because the store was restored from a backup",
    };
  } else if (unknown) {
    outcome = "failed";
    failure = {
      code: "effect_outcome_unknown",
      message: "A side-effecting tool call was started but its result was never recorded",
    };
  } else if (clean === "interrupted") {
    failure = { code: "interrupted", message: "The turn was interrupted before it finished" };
  }
  const planned = planTurnEnd(actor.record, {
    turnId: active.turnId,
    runId: active.runId,
    outcome,
    failure,
  });
  return { record: planned.record, entries: [...entries, ...planned.entries] };
}
