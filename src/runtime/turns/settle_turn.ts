/**
 * Ending an active turn that its run will not finish: after a cancel, a crash
 * or a failed run. Each call without a result is settled honestly (`unknown`
 * when its side effect may have happened, otherwise `cancelled`), and the turn
 * fails with `effect_outcome_unknown` if any call is `unknown`.
 *
 * @module
 */
import { nowIso } from "../../journal/now_iso.ts";
import type { NewEntry, TurnFailure, TurnOutcome } from "../../journal/entries.ts";
import { settleOpenCalls } from "../../projection/open_calls.ts";
import type { InteractionState } from "../../projection/interactions.ts";
import type { ThreadRecord } from "../../journal/thread_record.ts";
import { newId } from "../../identity/ids.ts";
import type { ActorChange, ThreadActor } from "../actor/thread_actor.ts";
import { planTurnEnd } from "./turn_end.ts";
import { secretAnswersOf, secretRunOf } from "./secret_delivery.ts";
import { STOPPED, unfinishedCompactions } from "./unfinished_compactions.ts";

/**
 * Settles a turn that is active in the journal but whose run is gone: it
 * died here on a store failure, or its host's lease lapsed. A turn running
 * on another live host is left alone. Call inside the actor's lock.
 *
 * @throws {StaleThreadError} when another writer got there first
 */
export async function settleOrphan(actor: ThreadActor): Promise<void> {
  if (!actor.abandoned) return;
  const change = planRecovery(actor);
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
  // A waiting turn has no run, but it is just as unfinished.
  const active = actor.record.active ?? actor.record.waiting;
  if (!active) return undefined;
  // A durable stop request wins over `interrupted`: the user asked for the stop.
  if (clean === "interrupted" && actor.record.stopRequest?.turnId === active.turnId) {
    clean = "cancelled";
  }
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
  // Pending approvals and questions are resolved as cancelled: nothing runs after this.
  for (const pending of actor.interactions.pendingOf(active.turnId)) {
    entries.push({
      kind: "interaction_resolved",
      turnId: active.turnId,
      interactionId: pending.id,
      resolution: { type: "cancelled" },
    });
  }
  const open = actor.openCalls.list();
  const { results, unknown } = settleOpenCalls(open);
  if (results.length > 0) {
    entries.push({ kind: "tool_results", turnId: active.turnId, runId: open[0].runId, results });
  }
  entries.push(...unfinishedCompactions(actor, active.turnId, STOPPED[clean]));
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

/**
 * Plans the settlement of a turn whose run died (restart, lapsed lease). A
 * secret answer lived only in that run's memory, so when the turn holds one
 * (and no side effect is in doubt) its secret questions are asked again as a
 * new pending interaction and the turn waits; otherwise the turn is
 * interrupted as usual.
 *
 * @param actor the thread (inside its lock)
 * @returns the change, or `undefined` when no turn is active
 */
export function planRecovery(actor: ThreadActor): ActorChange | undefined {
  const active = actor.record.active;
  if (!active) return planSettlement(actor, "interrupted");
  if (actor.record.stopRequest?.turnId === active.turnId) return planSettlement(actor, "cancelled");
  const lost = lostSecrets(actor, active.turnId, active.runId);
  const open = actor.openCalls.list();
  const { results, unknown } = settleOpenCalls(open);
  if (lost.length === 0 || unknown) return planSettlement(actor, "interrupted");
  const entries: NewEntry[] = [];
  if (results.length > 0) {
    entries.push({ kind: "tool_results", turnId: active.turnId, runId: open[0].runId, results });
  }
  entries.push(...unfinishedCompactions(actor, active.turnId, STOPPED.interrupted));
  entries.push(...reaskEntries(active.turnId, active.runId, lost));
  const record: ThreadRecord = {
    ...actor.record,
    status: "waiting",
    waiting: { turnId: active.turnId, runId: active.runId },
    updatedAt: nowIso(),
  };
  delete record.active;
  return { record, entries };
}

/**
 * Answered questions of the turn whose secret answers went with the dead run
 * `runId`, or never reached a run; one whose run ended normally is not lost.
 */
function lostSecrets(actor: ThreadActor, turnId: string, runId: string): InteractionState[] {
  const all = actor.interactions.all();
  return secretAnswersOf(all, turnId).filter((state) => {
    const run = secretRunOf(all, state);
    return run === undefined || run === runId;
  });
}

/**
 * Re-asks, as new pending input interactions, the secret questions of `lost`.
 *
 * @param turnId the waiting turn
 * @param runId the run the new interactions are recorded under
 * @param lost answered questions whose secret answers are gone
 * @returns the `interaction_opened` entries
 */
export function reaskEntries(
  turnId: string,
  runId: string,
  lost: readonly InteractionState[],
): NewEntry[] {
  return lost.map((state) => ({
    kind: "interaction_opened",
    turnId,
    runId,
    interactionId: newId("interaction"),
    interaction: "input",
    questions: (state.questions ?? []).filter((question) => question.secret),
    reaskOf: state.id,
  }));
}
