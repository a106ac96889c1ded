/**
 * After a commit failed, the store's state is unknown (the commit may have
 * landed with its reply lost) and a run may have died with its turn active.
 * Once the store answers again, the thread is read afresh and a turn left
 * without a run is settled `interrupted` (retryable), so the thread never
 * stays `running` with nothing running and `waitForIdle` resolves by itself.
 *
 * @module
 */
import { planSettlement } from "./settle_turn.ts";
import type { StoreProbes } from "./store_probe.ts";
import type { ThreadActor } from "../actor/thread_actor.ts";

/**
 * Probes the store until it answers, then settles `actor`'s orphaned turn.
 *
 * @param probes the host's probes (stopped at shutdown)
 * @param actor the thread whose commit failed
 */
export function settleWhenStoreAnswers(probes: StoreProbes, actor: ThreadActor): void {
  probes.start(actor.threadId, () =>
    actor.exclusive(async () => {
      if (!(await actor.refresh())) return; // deleted meanwhile
      if (!actor.abandoned) return; // nothing active, or a live run owns it
      const change = planSettlement(actor, "interrupted");
      if (change) await actor.commit(change);
    }));
}
