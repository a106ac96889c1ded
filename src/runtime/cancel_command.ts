/**
 * `cancel`: stops the current turn. Immediate mode commits the stop at once;
 * graceful mode first gives in-flight tools one shared 5 s window to commit
 * their results. Idempotent, and a no-op on an idle thread.
 *
 * @module
 */
import { claimOf } from "./request_keys.ts";
import type { ServiceContext } from "./service_context.ts";
import { viewCommand } from "./thread_command.ts";
import { planSettlement } from "./settle_turn.ts";
import { observeStopped } from "./unfinished_compactions.ts";
import type { ThreadView } from "../projection/view_types.ts";
import type { ActiveRun } from "./active_run.ts";
import { observeEnded } from "./observe_ended.ts";

/** How long graceful cancel waits for in-flight tools. */
export const GRACEFUL_TOOL_WINDOW_MS = 5_000;

/** Cancels the thread's running turn. */
export async function cancel(
  ctx: ServiceContext,
  command: {
    threadId: string;
    requestKey: string;
    mode?: "immediate" | "graceful";
    /** Handled by the service, which then stops every descendant (see subagents/cascade.ts). */
    includeDescendants?: boolean;
  },
): Promise<{ view: ThreadView }> {
  const { threadId, requestKey } = command;
  let stopped: ActiveRun | undefined;
  // Immediate mode awaits nothing before asking for the thread's lock, so it
  // keeps its place among commands issued without awaiting (see viewCommand).
  if (command.mode === "graceful") {
    const actor = await ctx.actors.get(threadId);
    const run = await actor.exclusive(async () => {
      ctx.assertOpen();
      actor.assertLive();
      const active = actor.run;
      if (!active || (await ctx.journal.request(threadId, requestKey))) return undefined;
      active.stop("The turn was cancelled", "provider");
      actor.markStopping();
      return active;
    });
    stopped = run;
    if (run?.batch) await raceWindow(run.batch, GRACEFUL_TOOL_WINDOW_MS);
  }
  // The mode is not part of the fingerprint.
  return viewCommand(ctx, command, "cancel", {}, async (actor, key) => {
    const run = actor.run;
    // A graceful stop may have let its run return already: its streamed text is still kept.
    const partial = run?.partial ??
      (stopped?.turnId === actor.record.active?.turnId ? stopped?.partial : undefined);
    const change = planSettlement(actor, "cancelled", partial);
    try {
      if (change) await actor.commit({ ...change, request: claimOf(key) });
    } catch (error) {
      actor.stopFailed();
      throw error;
    }
    observeStopped(ctx.runs.observe, threadId, change?.entries);
    if (ctx.runs.observing) observeEnded(ctx.runs.observe, threadId, change?.entries);
    // Only now, with the stop committed, is the run told to stop: it can write nothing more.
    actor.stopSettled(run, "The turn was cancelled");
  });
}

/** Waits for `work`, at most `ms`, without leaving a timer behind. */
async function raceWindow(work: Promise<void>, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([work, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}
