/**
 * `steer`: a user changing course while a turn is under way. A steer is a
 * durable entry of the open turn (running or waiting): it ends the provider
 * request in flight and joins the turn's next request, without ending the turn.
 *
 * @module
 */
import { nowIso } from "../../journal/now_iso.ts";
import { FloretError } from "../../errors.ts";
import { newId } from "../../identity/ids.ts";
import type { ThreadView } from "../../projection/view/view_types.ts";
import { claimOf } from "./request_keys.ts";
import type { ServiceContext } from "./service_context.ts";
import { settleOrphan } from "../turns/settle_turn.ts";
import { viewCommand } from "./thread_command.ts";

/**
 * Adds a steering message to the open turn.
 *
 * @throws {FloretError} `invalid_input` when no turn is under way (use `send`);
 *   `execution_deferred` for a turn left unfinished, on a host not yet activated
 */
export function steer(
  ctx: ServiceContext,
  command: { threadId: string; requestKey: string; text: string },
): Promise<{ view: ThreadView }> {
  const { threadId, text } = command;
  return viewCommand(ctx, command, "steer", { text }, async (actor, key) => {
    // On a deferred host a turn the previous process left is not settled here (activate or
    // prepareRestore does that), and steering it would join a turn that never runs on.
    if (ctx.gate.deferred && actor.abandoned) {
      ctx.gate.assertExecutable("steer a turn left unfinished");
    }
    await settleOrphan(actor);
    const turn = actor.record.active ?? actor.record.waiting;
    if (!turn) {
      throw new FloretError(
        "invalid_input",
        `Thread has no turn under way to steer (use send): ${threadId}`,
      );
    }
    await actor.commit({
      record: { ...actor.record, updatedAt: nowIso() },
      entries: [{ kind: "steer", turnId: turn.turnId, steerId: newId("steer"), text }],
      request: claimOf(key),
    });
    // Told after the commit: the request that follows the abort is built with the steer in it.
    const run = actor.run;
    if (run && run.turnId === turn.turnId) run.steer();
  });
}
