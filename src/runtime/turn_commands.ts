/**
 * Commands that start or queue turns: send, retry, promoteQueued, deleteQueued.
 *
 * @module
 */
import { FloretError } from "../errors.ts";
import { fingerprintOf } from "../identity/fingerprint.ts";
import { newId } from "../identity/ids.ts";
import type { AdmittedInput, SupplementalContext } from "../journal/entries.ts";
import {
  admitTurn,
  replayOf,
  type ServiceContext,
  settleOrphan,
  withStaleRetry,
} from "./service_context.ts";
import type { ThreadView } from "./view_types.ts";

/** A validated `send`. */
export interface SendCommand {
  threadId: string;
  requestKey: string;
  input: AdmittedInput;
  supplementalContext?: SupplementalContext[];
}

/** Admits a turn, or queues the input when the thread is busy. */
export async function send(
  ctx: ServiceContext,
  command: SendCommand,
): Promise<{ threadId: string; turnId?: string; queued: boolean; view: ThreadView }> {
  const { threadId, requestKey } = command;
  const actor = await ctx.actors.get(threadId);
  const input: AdmittedInput = { text: command.input.text };
  if (command.input.attachments?.length) input.attachments = command.input.attachments;
  const fingerprint = await fingerprintOf(input);
  return withStaleRetry(() =>
    actor.exclusive(async () => {
      ctx.assertOpen();
      actor.assertLive();
      const replay = await replayOf(ctx, threadId, requestKey, "send", fingerprint);
      if (replay) {
        return { threadId, ...replay, view: actor.snapshot() } as Awaited<ReturnType<typeof send>>;
      }
      await settleOrphan(actor);
      if (actor.record.status !== "idle" || actor.run) {
        const queueId = newId("queued");
        const item = { id: queueId, requestKey, input, queuedAt: new Date().toISOString() };
        const queued = command.supplementalContext?.length
          ? { ...item, supplementalContext: command.supplementalContext }
          : item;
        await actor.commit({
          record: { ...actor.record, queue: [...actor.record.queue, queued] },
          request: {
            scope: threadId,
            key: requestKey,
            value: { op: "send", fingerprint, result: { queued: true, queueId } },
          },
        });
        actor.publishStatus();
        return { threadId, queued: true, view: actor.snapshot() };
      }
      const turnId = await admitTurn(ctx, actor, {
        requestKey,
        input,
        supplementalContext: command.supplementalContext,
        claim: {
          key: requestKey,
          op: "send",
          fingerprint,
          result: (id) => ({ turnId: id, queued: false }),
        },
      });
      return { threadId, turnId, queued: false, view: actor.snapshot() };
    })
  );
}

/** Re-runs the latest turn: resumes a failed one, regenerates a completed one. */
export async function retry(
  ctx: ServiceContext,
  command: { threadId: string; requestKey: string; turnId?: string },
): Promise<{ turnId: string; view: ThreadView }> {
  const { threadId, requestKey } = command;
  const actor = await ctx.actors.get(threadId);
  const fingerprint = await fingerprintOf({ turnId: command.turnId ?? null });
  return withStaleRetry(() =>
    actor.exclusive(async () => {
      ctx.assertOpen();
      actor.assertLive();
      const replay = await replayOf(ctx, threadId, requestKey, "retry", fingerprint);
      if (replay) return { turnId: replay.turnId as string, view: actor.snapshot() };
      await settleOrphan(actor);
      if (actor.record.active || actor.run) {
        throw new FloretError("thread_busy", `Thread is running a turn: ${threadId}`);
      }
      const last = actor.record.lastTurn;
      if (!last?.outcome) {
        throw new FloretError("no_retry_target", `Thread has no turn to retry: ${threadId}`);
      }
      if (command.turnId !== undefined && command.turnId !== last.turnId) {
        throw new FloretError(
          "no_retry_target",
          `Only the latest turn can be retried: ${last.turnId}`,
        );
      }
      if (!last.retryable) {
        throw new FloretError(
          "no_retry_target",
          `Turn ${last.turnId} cannot be retried: a side effect of it may or may not have happened`,
        );
      }
      const mode = last.outcome === "completed" ? "regenerate" : "resume";
      const turnId = await admitTurn(ctx, actor, {
        requestKey,
        retryOf: { turnId: last.turnId, mode },
        claim: { key: requestKey, op: "retry", fingerprint, result: (id) => ({ turnId: id }) },
      });
      return { turnId, view: actor.snapshot() };
    })
  );
}

/** Starts a queued input now (after a failed or cancelled turn). */
export async function promoteQueued(
  ctx: ServiceContext,
  command: { threadId: string; requestKey: string; queueId: string },
): Promise<{ turnId: string; view: ThreadView }> {
  const { threadId, requestKey, queueId } = command;
  const actor = await ctx.actors.get(threadId);
  const fingerprint = await fingerprintOf({ queueId });
  return withStaleRetry(() =>
    actor.exclusive(async () => {
      ctx.assertOpen();
      actor.assertLive();
      const replay = await replayOf(ctx, threadId, requestKey, "promoteQueued", fingerprint);
      if (replay) return { turnId: replay.turnId as string, view: actor.snapshot() };
      await settleOrphan(actor);
      if (actor.record.active || actor.run) {
        throw new FloretError("thread_busy", `Thread is running a turn: ${threadId}`);
      }
      const item = actor.record.queue.find((queued) => queued.id === queueId);
      if (!item) throw new FloretError("invalid_input", `No queued input with id: ${queueId}`);
      const turnId = await admitTurn(ctx, actor, {
        requestKey: item.requestKey,
        input: item.input,
        supplementalContext: item.supplementalContext,
        record: (record) => ({
          ...record,
          queue: record.queue.filter((queued) => queued.id !== queueId),
        }),
        claim: {
          key: requestKey,
          op: "promoteQueued",
          fingerprint,
          result: (id) => ({ turnId: id }),
        },
      });
      return { turnId, view: actor.snapshot() };
    })
  );
}

/** Removes a queued input. */
export async function deleteQueued(
  ctx: ServiceContext,
  command: { threadId: string; requestKey: string; queueId: string },
): Promise<{ view: ThreadView }> {
  const { threadId, requestKey, queueId } = command;
  const actor = await ctx.actors.get(threadId);
  const fingerprint = await fingerprintOf({ queueId });
  return withStaleRetry(() =>
    actor.exclusive(async () => {
      ctx.assertOpen();
      actor.assertLive();
      if (await replayOf(ctx, threadId, requestKey, "deleteQueued", fingerprint)) {
        return { view: actor.snapshot() };
      }
      if (!actor.record.queue.some((queued) => queued.id === queueId)) {
        throw new FloretError("invalid_input", `No queued input with id: ${queueId}`);
      }
      await actor.commit({
        record: {
          ...actor.record,
          queue: actor.record.queue.filter((queued) => queued.id !== queueId),
        },
        request: {
          scope: threadId,
          key: requestKey,
          value: { op: "deleteQueued", fingerprint, result: {} },
        },
      });
      actor.publishStatus();
      return { view: actor.snapshot() };
    })
  );
}
