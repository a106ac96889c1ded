/**
 * Commands on interactions (approvals and questions): `respond`. This release
 * creates no interactions, so a new response names none; a replayed key
 * still answers with the thread's view.
 *
 * @module
 */
import { FloretError } from "../errors.ts";
import type { ThreadView } from "../projection/view_types.ts";
import { commandKey, replayOf } from "./request_keys.ts";
import type { ServiceContext } from "./service_context.ts";

/** A validated `respond`. */
export interface RespondCommand {
  threadId: string;
  requestKey: string;
  interactionId: string;
  decision?: "approve" | "deny";
  answers?: { questionId: string; value: string }[];
}

/**
 * Resolves a pending interaction.
 *
 * @throws {FloretError} `interaction_not_found`, `request_conflict`, `thread_not_found`
 */
export async function respond(
  ctx: ServiceContext,
  command: RespondCommand,
): Promise<{ view: ThreadView }> {
  const actor = await ctx.actors.get(command.threadId);
  const key = await commandKey(command, "respond", {
    interactionId: command.interactionId,
    decision: command.decision ?? null,
    answers: command.answers ?? null,
  });
  if (await replayOf(ctx.journal, command.threadId, key)) return { view: actor.snapshot() };
  throw new FloretError(
    "interaction_not_found",
    `No interaction with id: ${command.interactionId}`,
  );
}
