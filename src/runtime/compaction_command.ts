/**
 * `compact`: manual compaction of a thread's context. Below the target size
 * it is an explicit no-op; compaction itself is not in this release.
 *
 * @module
 */
import { FloretError } from "../errors.ts";
import type { ThreadView } from "../projection/view_types.ts";
import { context } from "./queries.ts";
import type { ServiceContext } from "./service_context.ts";

/** Below this many tokens, manual compaction is an explicit no-op. */
export const COMPACTION_TARGET_TOKENS = 50_000;

/**
 * Compacts a thread's context.
 *
 * @param windowTokens the model's window, for the estimate
 * @throws {FloretError} `execution_deferred` above the target (not in this release)
 */
export async function compact(
  ctx: ServiceContext,
  command: { threadId: string; requestKey: string },
  windowTokens: number,
): Promise<{ outcome: "compacted" | "noop"; view: ThreadView }> {
  const figures = await context(ctx, command.threadId, windowTokens);
  const view = (await ctx.actors.get(command.threadId)).snapshot();
  if (figures.estimateTokens < COMPACTION_TARGET_TOKENS) return { outcome: "noop", view };
  ctx.gate.assertExecutable("compact");
  throw new FloretError("execution_deferred", "Compaction is not available in this release");
}
