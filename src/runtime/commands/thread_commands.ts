/**
 * Commands on whole threads: create, setTitle, delete.
 *
 * @module
 */
import { nowIso } from "../../journal/now_iso.ts";
import { FloretError } from "../../errors.ts";
import { fingerprintNow } from "../../identity/fingerprint.ts";
import { newId } from "../../identity/ids.ts";
import { keys, tenantScope } from "../../journal/keys.ts";
import type { ThreadRecord } from "../../journal/thread_record.ts";
import { claimOf, type CommandKey, commandKey, commandKeyNow, replayOf } from "./request_keys.ts";
import type { ServiceContext } from "./service_context.ts";
import { viewCommand } from "./thread_command.ts";
import { retryStale, StaleThreadError } from "../actor/stale_retry.ts";
import { planSettlement } from "../turns/settle_turn.ts";
import type { ThreadView } from "../../projection/view/view_types.ts";
import { hostTitle } from "../turns/titles.ts";
import { observeEnded } from "./observe_ended.ts";

/** Creates an empty thread. */
export function create(
  ctx: ServiceContext,
  command: { requestKey: string; title?: string; tenant?: string },
): Promise<{ threadId: string; view: ThreadView }> {
  const scope = tenantScope(command.tenant);
  const scoped = { threadId: scope, requestKey: command.requestKey };
  // Where the runtime hashes synchronously, the key is there at once: no await for it.
  const key = command.title === undefined
    ? untitledKey(command.requestKey, scope)
    : commandKeyNow(scoped, "create", { title: command.title });
  return key instanceof Promise
    ? key.then((known) => createKeyed(ctx, command, known))
    : createKeyed(ctx, command, key);
}

/** {@link create} with its request key. */
function createKeyed(
  ctx: ServiceContext,
  command: { requestKey: string; title?: string; tenant?: string },
  key: CommandKey,
): Promise<{ threadId: string; view: ThreadView }> {
  return retryStale(async () => {
    ctx.assertOpen();
    // Scoped to the tenant: another tenant's key never replays into its thread.
    const replay = await replayOf(ctx.journal, key.threadId, key);
    if (replay) {
      const threadId = replay.threadId as string;
      return { threadId, view: (await ctx.actors.get(threadId)).snapshot() };
    }
    const now = nowIso();
    const record: ThreadRecord = {
      id: newId("thread"),
      createdAt: now,
      updatedAt: now,
      seq: 0,
      status: "idle",
      queue: [],
    };
    if (command.title !== undefined) Object.assign(record, hostTitle(record, command.title));
    if (command.tenant !== undefined) record.tenant = command.tenant;
    const change = {
      expected: null,
      record,
      request: claimOf(key, { threadId: record.id }, key.threadId),
    };
    // A synchronous store (memory) answers in this tick: no await of a value already there.
    const version = ctx.journal.commitsNow
      ? ctx.journal.commitNow(change)
      : await ctx.journal.commit(change);
    // A lost race means another caller claimed the key first: the next attempt replays it.
    if (version === null) throw new StaleThreadError(record.id);
    const made = ctx.actors.created({ record, version });
    return { threadId: record.id, view: (made instanceof Promise ? await made : made).snapshot() };
  });
}

// Every untitled create has the same input, `{ title: null }`: its SHA-256 is taken once.
let untitled: string | undefined;

/** The key of an untitled create (what `commandKey` computes for its input). */
function untitledKey(requestKey: string, scope: string): CommandKey | Promise<CommandKey> {
  untitled ??= fingerprintNow({ title: null });
  if (untitled === undefined) {
    return commandKey({ threadId: scope, requestKey }, "create", { title: null });
  }
  // A literal in commandKey's key order, not a spread (which copies through the runtime).
  return { threadId: scope, requestKey, op: "create", fingerprint: untitled };
}

/** Sets a thread's title. */
export function setTitle(
  ctx: ServiceContext,
  command: { threadId: string; requestKey: string; title: string },
): Promise<{ view: ThreadView }> {
  return viewCommand(ctx, command, "setTitle", { title: command.title }, async (actor, key) => {
    const record = {
      ...hostTitle(actor.record, command.title),
      updatedAt: nowIso(),
    };
    await actor.commit({ record, request: claimOf(key) });
  });
}

/**
 * Deletes a thread and, first, its child threads: stops their runs, waits
 * for them, then writes tombstones. Entries are purged unless a fork still
 * reads them. Replaying a delete succeeds.
 */
export async function deleteThread(
  ctx: ServiceContext,
  command: { threadId: string; requestKey: string },
): Promise<void> {
  const { threadId, requestKey } = command;
  const key = await commandKey(command, "delete", {});
  if (await replayOf(ctx.journal, threadId, key)) return;
  const actor = await ctx.actors.get(threadId);
  for (const childId of await ctx.journal.indexed(keys.childrenOf(threadId))) {
    try {
      await deleteThread(ctx, { threadId: childId, requestKey: `${requestKey}/${childId}` });
    } catch (error) {
      if (!(error instanceof FloretError && error.code === "thread_not_found")) throw error;
    }
  }
  // Stop the run and let it finish (tools commit what they completed) before the tombstone.
  const run = await actor.exclusive(() => {
    ctx.assertOpen();
    const active = actor.run;
    active?.stop("The thread was deleted");
    return active;
  });
  await run?.done;
  const deleted = await retryStale(() =>
    actor.exclusive(async () => {
      if (await replayOf(ctx.journal, threadId, key)) return false;
      actor.assertLive();
      const settled = planSettlement(actor, "cancelled");
      const record: ThreadRecord = {
        ...(settled?.record ?? actor.record),
        deleted: true,
        status: "idle",
        queue: [],
        updatedAt: nowIso(),
      };
      await actor.commit({
        record,
        entries: settled?.entries,
        request: claimOf(key),
      });
      if (ctx.runs.observing) {
        observeEnded(ctx.runs.observe, threadId, settled?.entries, actor.history);
      }
      return true;
    })
  );
  ctx.actors.forget(threadId);
  if (!deleted) return;
  if (actor.record.parentThreadId) {
    await ctx.journal.deleteKeys([keys.child(actor.record.parentThreadId, threadId)]);
  }
  await collectIfUnread(ctx, threadId);
}

/**
 * Purges a deleted thread's entries once no fork reads them any more, then
 * does the same for the source it was forked from: a chain of deleted
 * threads is collected when its last fork goes.
 */
async function collectIfUnread(ctx: ServiceContext, threadId: string): Promise<void> {
  const current = await ctx.journal.thread(threadId);
  if (!current?.record.deleted) return;
  if ((await ctx.journal.indexed(keys.forksOf(threadId))).length > 0) return;
  await ctx.journal.purge(keys.entries(threadId));
  await ctx.journal.purge(keys.artifactsOf(threadId));
  await ctx.journal.purge(keys.surfacesOf(threadId));
  const base = current.record.base;
  if (!base) return;
  await ctx.journal.deleteKeys([keys.fork(base.threadId, threadId)]);
  await collectIfUnread(ctx, base.threadId);
}
