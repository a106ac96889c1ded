/**
 * Commands that edit the queue of inputs waiting for a busy thread. (Queued
 * input leaves the queue when a turn takes it: see `turn_admission.ts`.)
 *
 * @module
 */
import { nowIso } from "../../journal/now_iso.ts";
import { FloretError } from "../../errors.ts";
import type { QueuedItem } from "../../journal/thread_record.ts";
import type { AdmittedInput } from "../../journal/entries.ts";
import type { ImageAttachment } from "../../provider/gateway.ts";
import type { ThreadView } from "../../projection/view/view_types.ts";
import { claimOf } from "./request_keys.ts";
import type { ServiceContext } from "./service_context.ts";
import type { ThreadActor } from "../actor/thread_actor.ts";
import { viewCommand } from "./thread_command.ts";
import { restoredInputsOps } from "../actor/actor_ops.ts";

/** Removes a queued input. */
export function deleteQueued(
  ctx: ServiceContext,
  command: { threadId: string; requestKey: string; queueId: string; expectedText?: string },
): Promise<{ view: ThreadView }> {
  const { queueId, expectedText } = command;
  // The fingerprint of a delete without a precondition is what it always was.
  const input = expectedText === undefined ? { queueId } : { queueId, expectedText };
  return viewCommand(ctx, command, "deleteQueued", input, async (actor, key) => {
    // A restored input (see restore.ts) is dismissed the same way as a queued one.
    const restored = actor.record.restoredInputs ?? [];
    const known = restored.find((item) => item.id === queueId) ?? queuedItem(actor, queueId);
    if (expectedText !== undefined && known.input.text !== expectedText) {
      throw new FloretError(
        "request_conflict",
        `Queued input ${queueId} has changed since it was read`,
      );
    }
    actor.unstored.dropSupplemental(queueId);
    const record = {
      ...actor.record,
      queue: actor.record.queue.filter((queued) => queued.id !== queueId),
    };
    if (restored.length > 0) {
      record.restoredInputs = restored.filter((item) => item.id !== queueId);
      if (record.restoredInputs.length === 0) delete record.restoredInputs;
    }
    await actor.commit({ record, request: claimOf(key) });
    actor.publishStatus();
    // The status ops carry the queue, not the restored inputs a dismissal changed.
    if (restored.length > 0) actor.publisher.pushHeard(restoredInputsOps, actor.record);
  });
}

/** The input of `editQueued` (the service's, and the command's here). */
export interface EditQueuedInput {
  /** The thread. */
  threadId: string;
  /** Makes the call idempotent. */
  requestKey: string;
  /** The queued input to edit. */
  queueId: string;
  /** The new text. */
  text: string;
  /** The text the caller saw; a different current text is `request_conflict`. */
  expectedText: string;
  /** Replaces the queued input's attachments (`[]` removes them). */
  attachments?: ImageAttachment[];
}

/** Replaces a queued input's text when it still reads `expectedText` (else `request_conflict`). */
export function editQueued(
  ctx: ServiceContext,
  command: EditQueuedInput,
): Promise<{ view: ThreadView }> {
  const { queueId, text, expectedText, attachments } = command;
  const input = attachments === undefined
    ? { queueId, text, expectedText }
    : { queueId, text, expectedText, attachments };
  return viewCommand(ctx, command, "editQueued", input, async (actor, key) => {
    const item = queuedItem(actor, queueId);
    if (item.input.text !== expectedText) {
      throw new FloretError(
        "request_conflict",
        `Queued input ${queueId} has changed since it was read`,
      );
    }
    // Attachments, when given, replace the queued ones (an empty list removes them).
    const edited: AdmittedInput = { ...item.input, text };
    if (attachments !== undefined) {
      if (attachments.length > 0) edited.attachments = attachments;
      else delete edited.attachments;
    }
    const queue = actor.record.queue.map((queued) =>
      queued === item ? { ...queued, input: edited } : queued
    );
    await actor.commit({
      record: { ...actor.record, queue, updatedAt: nowIso() },
      request: claimOf(key),
    });
    actor.publishStatus();
  });
}

/**
 * The queued input with this id.
 *
 * @throws {FloretError} `invalid_input` when the queue holds no such input
 */
export function queuedItem(actor: ThreadActor, queueId: string): QueuedItem {
  const item = actor.record.queue.find((queued) => queued.id === queueId);
  if (!item) {
    const restored = actor.record.restoredInputs?.some((queued) => queued.id === queueId);
    throw new FloretError(
      "invalid_input",
      restored
        ? `Input ${queueId} was restored from a backup: send it again to run it`
        : `No queued input with id: ${queueId}`,
    );
  }
  return item;
}
