/**
 * `steerQueued`: a queued input becomes a steer of the turn under way, in
 * one commit (it leaves the queue and joins the turn's next request), so it
 * is never both queued and steered, nor lost between the two.
 *
 * @module
 */
import { nowIso } from "../../journal/now_iso.ts";
import { FloretError } from "../../errors.ts";
import { newId } from "../../identity/ids.ts";
import type { ThreadView } from "../../projection/view/view_types.ts";
import { queuedItem } from "./queue_commands.ts";
import { claimOf } from "./request_keys.ts";
import type { ServiceContext } from "./service_context.ts";
import { settleOrphan } from "../turns/settle_turn.ts";
import { viewCommand } from "./thread_command.ts";

/**
 * Turns queued input `queueId` into a steer of the running (or waiting) turn.
 *
 * @throws {FloretError} `request_conflict` when its text is no longer
 *   `expectedText`; `invalid_input` for an unknown queue id, a queued input
 *   with attachments (a steer is text), or no turn under way
 */
export function steerQueued(
  ctx: ServiceContext,
  command: { threadId: string; requestKey: string; queueId: string; expectedText: string },
): Promise<{ view: ThreadView }> {
  const { threadId, queueId, expectedText } = command;
  return viewCommand(
    ctx,
    command,
    "steerQueued",
    { queueId, expectedText },
    async (actor, key) => {
      if (ctx.gate.deferred && actor.abandoned) {
        ctx.gate.assertExecutable("steer a turn left unfinished");
      }
      await settleOrphan(actor);
      const item = queuedItem(actor, queueId);
      if (item.input.text !== expectedText) {
        throw new FloretError(
          "request_conflict",
          `Queued input ${queueId} has changed since it was read`,
        );
      }
      if (
        item.input.attachments?.length || item.input.references?.length ||
        item.input.context?.length
      ) {
        throw new FloretError(
          "invalid_input",
          `Queued input ${queueId} has attachments, references or context, which a steer cannot carry: promote it instead`,
        );
      }
      const turn = actor.record.active ?? actor.record.waiting;
      if (!turn) {
        throw new FloretError(
          "invalid_input",
          `Thread has no turn under way to steer (promote the queued input): ${threadId}`,
        );
      }
      const record = {
        ...actor.record,
        queue: actor.record.queue.filter((queued) => queued.id !== queueId),
        updatedAt: nowIso(),
      };
      await actor.commit({
        record,
        entries: [{
          kind: "steer",
          turnId: turn.turnId,
          steerId: newId("steer"),
          text: item.input.text,
        }],
        request: claimOf(key),
      });
      actor.unstored.dropSupplemental(queueId);
      actor.publishStatus();
      const run = actor.run;
      if (run && run.turnId === turn.turnId) run.steer();
    },
  );
}
