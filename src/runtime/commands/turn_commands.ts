/**
 * Commands that start turns: `send` (which queues while the thread is busy),
 * `retry` and `promoteQueued`. Each admits its turn through `admitTurn`.
 *
 * @module
 */
import { nowIso } from "../../journal/now_iso.ts";
import { FloretError } from "../../errors.ts";
import { newId } from "../../identity/ids.ts";
import type { AdmittedInput, SupplementalContext } from "../../journal/entries.ts";
import type { QueuedItem } from "../../journal/thread_record.ts";
import type { ThreadView } from "../../projection/view/view_types.ts";
import { queuedItem } from "./queue_commands.ts";
import { claimOf, type CommandKey, commandKeyNow, withKey } from "./request_keys.ts";
import { driveRuns } from "../turns/run_driver.ts";
import type { ServiceContext } from "./service_context.ts";
import { settleOrphan } from "../turns/settle_turn.ts";
import type { ThreadActor } from "../actor/thread_actor.ts";
import { threadCommand } from "./thread_command.ts";
import { type Admission, admitTurn, queuedAdmission } from "../turns/turn_admission.ts";
import { firstMessageTitle } from "../turns/titles.ts";

/** A validated `send`. */
export interface SendCommand {
  threadId: string;
  requestKey: string;
  input: AdmittedInput;
  supplementalContext?: SupplementalContext[];
  /** Run labels, validated: the turn keeps them. */
  labels?: Record<string, string>;
}

/** What `send` returns. */
export interface SendResult {
  threadId: string;
  turnId?: string;
  queued: boolean;
  view: ThreadView;
}

/** Admits a turn, or queues the input when the thread is busy. */
export function send(ctx: ServiceContext, command: SendCommand): Promise<SendResult> {
  const input: AdmittedInput = { text: command.input.text };
  if (command.input.attachments?.length) input.attachments = command.input.attachments;
  if (command.input.references?.length) input.references = command.input.references;
  if (command.input.context?.length) input.context = command.input.context;
  // Where the runtime hashes synchronously, the key is there at once: no await for it.
  // Labels join the fingerprint only when given: a send without them keeps its old fingerprint.
  const key = commandKeyNow(
    command,
    "send",
    hasLabels(command.labels) ? { ...input, labels: command.labels } : input,
  );
  return key instanceof Promise
    ? key.then((known) => sendKeyed(ctx, command, input, known))
    : sendKeyed(ctx, command, input, key);
}

/** {@link send} with its request key. */
function sendKeyed(
  ctx: ServiceContext,
  command: SendCommand,
  input: AdmittedInput,
  key: CommandKey,
): Promise<SendResult> {
  const { threadId, requestKey } = command;
  return threadCommand(ctx, {
    // The key's fields one by one, not a spread (which copies through the runtime).
    threadId: key.threadId,
    requestKey: key.requestKey,
    op: key.op,
    fingerprint: key.fingerprint,
    // Methods, not arrow properties: under tsx (esbuild keepNames) an arrow
    // property is wrapped to name it, which every send would pay.
    replay(result, actor) {
      return { threadId, ...result, view: actor.snapshot() } as SendResult;
    },
    async run(actor) {
      // A deferred host leaves an unfinished turn as it is (activate or a restore settles it).
      // Asked here first: nearly every send finds nothing to settle, and then skips an async call.
      if (!ctx.gate.deferred && actor.abandoned) await settleOrphan(actor);
      if (actor.record.status !== "idle" || actor.run) {
        const queued: QueuedItem = {
          id: newId("queued"),
          requestKey,
          input,
          queuedAt: nowIso(),
        };
        if (hasLabels(command.labels)) queued.labels = command.labels;
        const { record } = firstMessageTitle(
          actor.record,
          input,
          undefined,
          actor.ownership.hostId,
        );
        record.queue = [...record.queue, queued];
        await actor.commit({
          record,
          request: claimOf(key, { queued: true, queueId: queued.id }),
        });
        // Memory only: a queued send's supplemental context never reaches the store.
        if (command.supplementalContext?.length) {
          actor.unstored.holdSupplemental(queued.id, command.supplementalContext);
        }
        actor.publishStatus();
        return { threadId, queued: true, view: actor.snapshot() };
      }
      ctx.gate.assertExecutable("send would start a turn");
      const turnId = await startTurn(ctx, actor, {
        requestKey,
        input,
        supplementalContext: command.supplementalContext,
        labels: hasLabels(command.labels) ? command.labels : undefined,
        claim(id) {
          return claimOf(key, { turnId: id, queued: false });
        },
      });
      return { threadId, turnId, queued: false, view: actor.snapshot() };
    },
  });
}

/**
 * Re-runs the latest turn: resumes a failed one, regenerates a completed one.
 * Its key is taken at once (see `withKey`), so it keeps its place among
 * commands issued without awaiting.
 */
export function retry(
  ctx: ServiceContext,
  command: { threadId: string; requestKey: string; turnId?: string },
): Promise<{ turnId: string; view: ThreadView }> {
  const input = { turnId: command.turnId ?? null };
  return withKey(commandKeyNow(command, "retry", input), (key) =>
    threadCommand(ctx, {
      ...key,
      replay(result, actor) {
        return { turnId: result.turnId as string, view: actor.snapshot() };
      },
      async run(actor) {
        ctx.gate.assertExecutable("retry");
        await assertIdle(actor);
        const last = actor.record.lastTurn;
        if (!last?.outcome) {
          throw new FloretError(
            "no_retry_target",
            `Thread has no turn to retry: ${actor.threadId}`,
          );
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
            last.code === "restored_turn"
              ? `Turn ${last.turnId} cannot be retried: it was stopped by a restore; send it again`
              : `Turn ${last.turnId} cannot be retried: a side effect of it may or may not have happened`,
          );
        }
        const turnId = await startTurn(ctx, actor, {
          requestKey: command.requestKey,
          retryOf: {
            turnId: last.turnId,
            mode: last.outcome === "completed" ? "regenerate" : "resume",
          },
          // Labels belong to the turn: a retry runs with its source's.
          labels: actor.history.labelsOf(last.turnId),
          claim(id) {
            return claimOf(key, { turnId: id });
          },
        });
        return { turnId, view: actor.snapshot() };
      },
    }));
}

/** Starts a queued input now (after a failed or cancelled turn); its key is taken at once, as retry's. */
export function promoteQueued(
  ctx: ServiceContext,
  command: { threadId: string; requestKey: string; queueId: string },
): Promise<{ turnId: string; view: ThreadView }> {
  const input = { queueId: command.queueId };
  return withKey(commandKeyNow(command, "promoteQueued", input), (key) =>
    threadCommand(ctx, {
      ...key,
      replay(result, actor) {
        return { turnId: result.turnId as string, view: actor.snapshot() };
      },
      async run(actor) {
        ctx.gate.assertExecutable("promoteQueued");
        await assertIdle(actor);
        const turnId = await startTurn(ctx, actor, {
          ...queuedAdmission(queuedItem(actor, command.queueId), actor),
          claim(id) {
            return claimOf(key, { turnId: id });
          },
        });
        return { turnId, view: actor.snapshot() };
      },
    }));
}

/** Whether `send` was given at least one run label (`{}` is as good as none). */
function hasLabels(labels: Record<string, string> | undefined): labels is Record<string, string> {
  if (labels === undefined) return false;
  for (const _ in labels) return true;
  return false;
}

/** Admits a turn and drives its run (and the turns it hands over to). */
export async function startTurn(
  ctx: ServiceContext,
  actor: ThreadActor,
  admission: Admission,
): Promise<string> {
  const run = await admitTurn(ctx.runs, actor, admission);
  driveRuns(actor, run, ctx.runs);
  return run.turnId;
}

/**
 * Commands that cannot queue refuse a thread with a turn in progress: one
 * running, or one waiting for an interaction.
 *
 * @param actor the thread, in its lock
 * @throws {FloretError} `thread_busy`
 */
export async function assertIdle(actor: ThreadActor): Promise<void> {
  await settleOrphan(actor);
  if (actor.record.active || actor.record.waiting || actor.run) {
    throw new FloretError("thread_busy", `Thread has a turn under way: ${actor.threadId}`);
  }
}
