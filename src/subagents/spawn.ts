/**
 * Starting a child thread for a parent's `spawn_agent` call. The spawn is
 * keyed by the parent's call id: the first use creates the child (record,
 * child index and key claim in one commit) and admits its task as the first
 * turn; a replay, a retry of the parent's turn or a call after a crash finds
 * the same child and starts no second one. A call that repeats a cut-off
 * call under a new id adopts that call's child (see adopt.ts).
 *
 * @module
 */
import { nowIso } from "../journal/now_iso.ts";
import type { Agent } from "../config/agent.ts";
import { newId } from "../identity/ids.ts";
import { encodeValue } from "../journal/codec.ts";
import { keys } from "../journal/keys.ts";
import type { ThreadRecord } from "../journal/thread_record.ts";
import { claimOf, commandKey, replayOf } from "../runtime/commands/request_keys.ts";
import type { ServiceContext } from "../runtime/commands/service_context.ts";
import { retryStale, StaleThreadError } from "../runtime/actor/stale_retry.ts";
import { hostTitle } from "../runtime/turns/titles.ts";
import { send } from "../runtime/commands/turn_commands.ts";
import { orphanedChild } from "./adopt.ts";

/** What `spawn_agent` asks for. */
export interface SpawnRequest {
  /** The id of one of the parent agent's `subagents`. */
  agent: string;
  /** The child's first user turn. */
  task: string;
  /** The child thread's title. */
  title?: string;
}

/** The child's id, or why no child was started (a message for the model). */
export type SpawnOutcome = { threadId: string } | { error: string };

/** The child's first turn claims this key on the child thread. */
const TASK_KEY = "spawn_agent/task";

/** Request records of spawns live in a scope of their own per parent, apart from host keys. */
export function spawnScope(parentThreadId: string): string {
  return `spawn/${parentThreadId}`;
}

/**
 * Starts (or finds again) the child for one `spawn_agent` call.
 *
 * @param ctx the service
 * @param parent the parent thread, its agent and the call id that keys the spawn
 * @param request the agent name, task and title
 */
export async function spawnChild(
  ctx: ServiceContext,
  parent: { threadId: string; callId: string; agent: Agent },
  request: SpawnRequest,
): Promise<SpawnOutcome> {
  const scope = spawnScope(parent.threadId);
  const key = await commandKey(
    { threadId: scope, requestKey: parent.callId },
    "spawn_agent",
    { agent: request.agent, task: request.task, title: request.title ?? null },
  );
  const known = await replayOf(ctx.journal, scope, key);
  if (known) return await startTask(ctx, known.threadId as string, request.task);

  const child = parent.agent.subagents.get(request.agent);
  if (!child) {
    const names = [...parent.agent.subagents.keys()].join(", ");
    return { error: `Unknown agent "${request.agent}". Valid agents: ${names}` };
  }
  const orphan = await orphanedChild(ctx, parent.threadId, scope, request);
  const refusal = orphan ? undefined : await limitBreach(ctx, parent.threadId, parent.agent);
  if (refusal) return { error: refusal };

  const threadId = await retryStale(async () => {
    ctx.assertOpen();
    const replay = await replayOf(ctx.journal, scope, key);
    if (replay) return replay.threadId as string;
    if (orphan) {
      // The new call claims the cut-off call's child: a key of its own, no new thread.
      const claimed = await ctx.journal.store.commit({
        checks: [{ key: keys.request(scope, parent.callId), version: null }],
        set: [{
          key: keys.request(scope, parent.callId),
          value: encodeValue(claimOf(key, { threadId: orphan }, scope).value),
        }],
      });
      if (!claimed.ok) throw new StaleThreadError(orphan);
      return orphan;
    }
    const now = nowIso();
    const record: ThreadRecord = {
      id: newId("thread"),
      createdAt: now,
      updatedAt: now,
      parentThreadId: parent.threadId,
      agentId: child.id,
      seq: 0,
      status: "idle",
      queue: [],
    };
    // The spawn's title is the child's host title: `ready`, generation 1, as at `create`.
    if (request.title !== undefined) Object.assign(record, hostTitle(record, request.title));
    // A child belongs to its parent's tenant.
    const tenant = ctx.actors.loaded(parent.threadId)?.record.tenant ??
      (await ctx.journal.thread(parent.threadId))?.record.tenant;
    if (tenant !== undefined) record.tenant = tenant;
    const version = await ctx.journal.commit({
      expected: null,
      record,
      request: claimOf(key, { threadId: record.id }, scope),
      set: [{ key: keys.child(parent.threadId, record.id), value: { agentId: child.id } }],
    });
    if (version === null) throw new StaleThreadError(record.id);
    if (ctx.runs.observing) {
      ctx.runs.observe({
        type: "subagent.spawned",
        threadId: parent.threadId,
        childThreadId: record.id,
        agentId: child.id,
        at: now,
      });
    }
    return record.id;
  });
  return await startTask(ctx, threadId, request.task);
}

/** Admits the task as the child's first turn; a replay of its key changes nothing. */
async function startTask(
  ctx: ServiceContext,
  threadId: string,
  task: string,
): Promise<SpawnOutcome> {
  await send(ctx, { threadId, requestKey: TASK_KEY, input: { text: task } });
  return { threadId };
}

/** Why a new child may not start under this parent (depth or live children), if it may not. */
async function limitBreach(
  ctx: ServiceContext,
  parentThreadId: string,
  agent: Agent,
): Promise<string | undefined> {
  const { maxDepth, maxLiveChildren } = agent.subagentLimits;
  let depth = 1;
  let cursor = (await ctx.journal.thread(parentThreadId))?.record;
  while (cursor?.parentThreadId) {
    depth++;
    cursor = (await ctx.journal.thread(cursor.parentThreadId))?.record;
  }
  if (depth > maxDepth) {
    return `Cannot start a child agent here: children may nest at most ${maxDepth} deep ` +
      `and this one would be at depth ${depth}. Do the work yourself.`;
  }
  const childIds = await ctx.journal.indexed(keys.childrenOf(parentThreadId));
  const records = await ctx.journal.threads(childIds);
  const live = records.filter((record) =>
    record && !record.deleted &&
    (ctx.actors.loaded(record.id)?.status ?? record.status) !== "idle"
  ).length;
  if (live >= maxLiveChildren) {
    return `Cannot start another child agent: ${live} are still running or waiting ` +
      `(at most ${maxLiveChildren}). Wait for some with wait_agents or cancel them first.`;
  }
  return undefined;
}
