/**
 * Restart recovery: before a host accepts commands, every thread that a
 * previous process of this host (or a host whose lease lapsed) left with an
 * active turn is settled — `interrupted`
 * (retryable), or failed with `effect_outcome_unknown` when a side-effecting
 * call was dispatched without a recorded result. Nothing resumes by itself.
 *
 * @module
 */
import { nowIso } from "../../journal/now_iso.ts";
import type { Journal } from "../../journal/journal.ts";
import { keys } from "../../journal/keys.ts";
import type { ObservationEvent } from "../../observation/events.ts";
import { Publisher } from "../actor/publisher.ts";
import { planRecovery } from "../turns/settle_turn.ts";
import { retryStale } from "../actor/stale_retry.ts";
import { ThreadActor } from "../actor/thread_actor.ts";
import { observeStopped } from "../turns/unfinished_compactions.ts";
import type { Ownership } from "../actor/ownership.ts";

/**
 * Settles every thread left active.
 *
 * @returns how many threads were settled
 */
export async function recoverThreads(
  journal: Journal,
  ownership: Ownership,
  observe: (event: ObservationEvent) => void,
): Promise<number> {
  let settled = 0;
  for (const threadId of await journal.activeThreadIds()) {
    const actor = await ThreadActor.load(journal, threadId, new Publisher(), ownership);
    if (!actor) {
      await journal.deleteKeys([keys.active(threadId)]);
      continue;
    }
    // Another writer may move the record meanwhile: plan again on what it wrote.
    const active = await retryStale(async () => {
      const active = actor.record.active;
      if (active && !actor.abandoned) return undefined; // another live host runs it
      const change = planRecovery(actor);
      if (!change || !active) {
        await actor.commit({ record: actor.record, delete: [keys.active(threadId)] });
        return undefined;
      }
      await actor.commit(change);
      observeStopped(observe, threadId, change.entries);
      return active;
    });
    if (!active) continue;
    settled++;
    observe({
      type: "turn.recovered",
      threadId,
      turnId: active.turnId,
      runId: active.runId,
      at: nowIso(),
      outcome: actor.view.turns.at(-1)?.outcome,
    });
  }
  return settled;
}
