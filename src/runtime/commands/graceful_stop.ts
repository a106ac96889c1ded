/**
 * Graceful cancel as a durable stop request: the command commits
 * `record.stopRequest` and returns at once (`view.stopping`); in-flight
 * tools get one shared 5 s window to commit their results, then the turn
 * settles `cancelled`. A host that crashes meanwhile leaves the request in
 * the record, and whoever settles the turn next settles it `cancelled`, not
 * `interrupted` (settle_turn.ts).
 *
 * @module
 */
import { isFloretError } from "../../errors.ts";
import { nowIso } from "../../journal/now_iso.ts";
import type { ThreadRecord } from "../../journal/thread_record.ts";
import type { ThreadView, ViewOp } from "../../projection/view/view_types.ts";
import type { ActiveRun } from "../actor/active_run.ts";
import { observeEnded } from "./observe_ended.ts";
import { claimOf } from "./request_keys.ts";
import type { ServiceContext } from "./service_context.ts";
import { planSettlement } from "../turns/settle_turn.ts";
import type { ThreadActor } from "../actor/thread_actor.ts";
import { viewCommand } from "./thread_command.ts";
import { observeStopped } from "../turns/unfinished_compactions.ts";

/** How long a graceful stop waits for in-flight tools. */
export const GRACEFUL_WINDOW_MS = 5_000;

/** The view op of the stop request (`null`: none). */
export function stoppingOps(record: ThreadRecord): ViewOp[] {
  const request = record.stopRequest;
  return [{
    op: "component",
    name: "stopping",
    value: request ? { mode: request.mode, requestedAt: request.requestedAt } : null,
  }];
}

/**
 * Commits a graceful stop request for the turn under way and returns; the
 * turn settles `cancelled` in the background within the window. A waiting
 * turn (nothing runs) or one whose run is not on this host settles at once.
 */
export function gracefulCancel(
  ctx: ServiceContext,
  command: { threadId: string; requestKey: string },
  settleNow: (actor: ThreadActor, key: Parameters<typeof claimOf>[0]) => Promise<void>,
): Promise<{ view: ThreadView }> {
  // The mode is not part of the fingerprint (as for an immediate cancel).
  return viewCommand(ctx, command, "cancel", {}, async (actor, key) => {
    const active = actor.record.active;
    const run = actor.run;
    if (!active || !run || run.turnId !== active.turnId) return await settleNow(actor, key);
    if (actor.record.stopRequest?.turnId === active.turnId) {
      // Asked already: this request joins it.
      await actor.commit({ record: actor.record, request: claimOf(key) });
      return;
    }
    const record: ThreadRecord = {
      ...actor.record,
      stopRequest: { turnId: active.turnId, mode: "graceful", requestedAt: nowIso() },
    };
    await actor.commit({ record, request: claimOf(key) });
    actor.publisher.pushHeard(stoppingOps, actor.record);
    run.stop("The turn was cancelled", "provider");
    actor.markStopping();
    void settleLater(ctx, actor, run);
  });
}

/** After the window (or once the run has returned), settles the turn `cancelled`. */
async function settleLater(ctx: ServiceContext, actor: ThreadActor, run: ActiveRun): Promise<void> {
  // The run returns once its tools' results are committed (the stop ended its provider request).
  await raceWindow(run.done, GRACEFUL_WINDOW_MS);
  try {
    await actor.exclusive(async () => {
      ctx.assertOpen();
      const active = actor.record.active;
      if (!active || active.turnId !== run.turnId) {
        // The turn ended meanwhile (its end cleared the request).
        actor.stopSettled(run, "The turn was cancelled");
        return;
      }
      const mine = actor.run;
      const partial = mine?.partial ?? run.partial;
      const change = planSettlement(actor, "cancelled", partial);
      if (change) await actor.commit(change);
      observeStopped(ctx.runs.observe, actor.threadId, change?.entries);
      if (ctx.runs.observing) {
        observeEnded(ctx.runs.observe, actor.threadId, change?.entries, actor.history);
      }
      actor.stopSettled(mine ?? run, "The turn was cancelled");
      actor.publisher.pushHeard(stoppingOps, actor.record);
    });
  } catch (error) {
    // The store failed or the host closed: the durable request stays, and whoever
    // settles the turn next (this host once the store answers, or the next host)
    // settles it `cancelled`.
    actor.stopFailed();
    if (isFloretError(error, "host_closed")) return;
    // The window is over: the run (say, a tool that ignores its signal) may commit
    // nothing more, and once the store answers again this host settles the turn.
    if (actor.run === run) actor.stopSettled(run, "The turn was cancelled");
    ctx.actors.settleWhenStoreAnswers(actor);
  }
}

/** Waits for `work`, at most `ms`, without leaving a timer behind. */
async function raceWindow(work: Promise<void>, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([
    work.catch(() => undefined),
    new Promise<void>((resolve) => (timer = setTimeout(resolve, ms))),
  ]);
  clearTimeout(timer);
}
