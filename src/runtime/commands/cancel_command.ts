/**
 * `cancel`: stops the current turn. Immediate mode commits the stop at once;
 * graceful mode commits a durable stop request and returns, giving in-flight
 * tools one shared 5 s window to commit their results before the turn settles
 * `cancelled` (graceful_stop.ts). Idempotent, and a no-op on an idle thread.
 *
 * @module
 */
import { claimOf } from "./request_keys.ts";
import type { ServiceContext } from "./service_context.ts";
import { viewCommand } from "./thread_command.ts";
import { planSettlement } from "../turns/settle_turn.ts";
import { observeStopped } from "../turns/unfinished_compactions.ts";
import type { ThreadView } from "../../projection/view/view_types.ts";
import type { ThreadActor } from "../actor/thread_actor.ts";
import type { CommandKey } from "./request_keys.ts";
import { GRACEFUL_WINDOW_MS, gracefulCancel, stoppingOps } from "./graceful_stop.ts";
import { observeEnded } from "./observe_ended.ts";

/** How long graceful cancel waits for in-flight tools. */
export const GRACEFUL_TOOL_WINDOW_MS = GRACEFUL_WINDOW_MS;

/** The input of `cancel` (the service's, and the command's here). */
export interface CancelInput {
  /** The thread whose turn stops. */
  threadId: string;
  /** Makes the call idempotent. */
  requestKey: string;
  /** `immediate` (default) stops at once; `graceful` lets in-flight tools finish first. */
  mode?: "immediate" | "graceful";
  /** Also stop every child thread (and theirs); handled by the service (subagents/cascade.ts). */
  includeDescendants?: boolean;
}

/** Cancels the thread's running turn. */
export function cancel(
  ctx: ServiceContext,
  command: CancelInput,
): Promise<{ view: ThreadView }> {
  const { threadId } = command;
  // The mode is not part of the fingerprint.
  const settle = async (actor: ThreadActor, key: CommandKey) => {
    const run = actor.run;
    const change = planSettlement(actor, "cancelled", run?.partial);
    try {
      if (change) await actor.commit({ ...change, request: claimOf(key) });
    } catch (error) {
      actor.stopFailed();
      throw error;
    }
    observeStopped(ctx.runs.observe, threadId, change?.entries);
    if (ctx.runs.observing) {
      observeEnded(ctx.runs.observe, threadId, change?.entries, actor.history);
    }
    // Only now, with the stop committed, is the run told to stop: it can write nothing more.
    actor.stopSettled(run, "The turn was cancelled");
    if (change?.record && actor.record.stopRequest === undefined) {
      actor.publisher.pushHeard(stoppingOps, actor.record);
    }
  };
  // Graceful: a durable stop request, committed and answered at once (graceful_stop.ts).
  if (command.mode === "graceful") return gracefulCancel(ctx, command, settle);
  // Immediate mode awaits nothing before asking for the thread's lock, so it
  // keeps its place among commands issued without awaiting (see viewCommand).
  return viewCommand(ctx, command, "cancel", {}, settle);
}
