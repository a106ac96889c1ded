/**
 * Preparing a store restored from a backup, before its host executes
 * anything: what was running when the backup was taken must not pick up
 * again under today's authority. Unfinished turns stop (`interrupted`,
 * `restored_turn`, never retryable), pending interactions are released as
 * cancelled, and queued inputs leave the queue for `view.restoredInputs`,
 * where the host can offer them to the user again. Running it twice changes
 * nothing more. A restore never undoes side effects that happened outside
 * the store.
 *
 * @module
 */
import { nowIso } from "../../journal/now_iso.ts";
import { FloretError } from "../../errors.ts";
import type { Journal } from "../../journal/journal.ts";
import type { ThreadRecord } from "../../journal/thread_record.ts";
import type { ActorCache } from "../turns/actor_cache.ts";
import type { Ownership } from "../actor/ownership.ts";
import { planSettlement } from "../turns/settle_turn.ts";
import { retryStale } from "../actor/stale_retry.ts";
import type { ThreadActor } from "../actor/thread_actor.ts";
import { restoredInputsOps } from "../actor/actor_ops.ts";
import { settleTitleClaims } from "../turns/titles.ts";

/** What one `prepareRestore()` call changed. */
export interface RestoreReport {
  /** Unfinished turns it stopped. */
  stoppedTurns: number;
  /** Pending approvals and questions it released as cancelled. */
  releasedInteractions: number;
  /** Queued inputs it moved to `view.restoredInputs`. */
  restoredInputs: number;
}

/** Threads read per page while walking the store. */
const PAGE = 256;

/**
 * Prepares every thread of the store for a restore.
 *
 * @param journal the restored store
 * @param actors the host's actors (reads may have loaded some)
 * @param ownership this host (title claims are settled whoever owned them)
 * @returns what this call changed (zeros when the store was already prepared)
 */
export async function prepareRestore(
  journal: Journal,
  actors: ActorCache,
  ownership: Ownership,
): Promise<RestoreReport> {
  const report: RestoreReport = { stoppedTurns: 0, releasedInteractions: 0, restoredInputs: 0 };
  let after: string | undefined;
  for (;;) {
    const ids = await journal.threadIdPage(PAGE, after);
    for (const threadId of ids) {
      let actor: ThreadActor;
      try {
        actor = await actors.get(threadId);
      } catch (error) {
        if (error instanceof FloretError && error.code === "thread_not_found") continue;
        throw error;
      }
      await retryStale(() => actor.exclusive(() => prepareThread(actor, report)));
    }
    actors.trim();
    if (ids.length < PAGE) break;
    after = ids[ids.length - 1];
  }
  await settleTitleClaims(journal, ownership, true);
  return report;
}

/** One thread, inside its lock; adds what it changed to `report`. */
async function prepareThread(actor: ThreadActor, report: RestoreReport): Promise<void> {
  await actor.sync();
  if (actor.record.deleted) return;
  // Whatever the thread has unfinished (a running or a waiting turn) is stopped.
  const settled = planSettlement(actor, "restored");
  const base = settled?.record ?? actor.record;
  const queued = base.queue;
  if (!settled && queued.length === 0) return;
  const record: ThreadRecord = {
    ...base,
    queue: [],
    updatedAt: nowIso(),
  };
  if (queued.length > 0) record.restoredInputs = [...(base.restoredInputs ?? []), ...queued];
  await actor.commit({ record, entries: settled?.entries });
  if (settled) {
    report.stoppedTurns++;
    // The settlement resolves each pending approval or question as cancelled.
    report.releasedInteractions += (settled.entries ?? []).filter((entry) =>
      entry.kind === "interaction_resolved"
    ).length;
  }
  report.restoredInputs += queued.length;
  actor.publishStatus();
  // The status ops carry the emptied queue; subscribers need where its inputs went too.
  if (queued.length > 0) actor.publisher.pushHeard(restoredInputsOps, actor.record);
}
