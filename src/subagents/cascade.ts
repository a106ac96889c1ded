/**
 * Reaching every descendant of a thread: `cancel({ includeDescendants })`
 * stops the parent first, then each child and its children in turn, and
 * returns once every stop is committed.
 *
 * @module
 */
import { FloretError } from "../errors.ts";
import { keys } from "../journal/keys.ts";
import { cancel } from "../runtime/commands/cancel_command.ts";
import type { ServiceContext } from "../runtime/commands/service_context.ts";

/**
 * Cancels every descendant of `threadId` (not the thread itself). Each child
 * gets its own request key derived from the parent's, so a replay replays.
 *
 * @param ctx the service
 * @param command the parent thread, the cancel's key and mode
 */
export async function cancelDescendants(
  ctx: ServiceContext,
  command: { threadId: string; requestKey: string; mode?: "immediate" | "graceful" },
): Promise<void> {
  const childIds = await ctx.journal.indexed(keys.childrenOf(command.threadId));
  await Promise.all(childIds.map(async (childId) => {
    const child = { ...command, threadId: childId, requestKey: `${command.requestKey}/${childId}` };
    try {
      await cancel(ctx, child);
    } catch (error) {
      // A child deleted meanwhile has nothing left to stop.
      if (error instanceof FloretError && error.code === "thread_not_found") return;
      throw error;
    }
    await cancelDescendants(ctx, child);
  }));
}
