/**
 * Read-only queries: history pages, the thread list, context figures, and
 * waiting for a thread to become idle. All derived from the journal.
 *
 * @module
 */
import { FloretError } from "../errors.ts";
import { keys } from "../journal/keys.ts";
import { artifactShape } from "../journal/stored_shapes.ts";
import type { ThreadRecord } from "../journal/thread_record.ts";
import type { Usage } from "../provider/gateway.ts";
import { roughTokenCount } from "../provider/rough_token_count.ts";
import { titleStateOf } from "../projection/title_state.ts";
import type { ServiceContext } from "./service_context.ts";
import type {
  Artifact,
  ContextFigures,
  ThreadItem,
  ThreadStatus,
  ThreadSummary,
  ThreadView,
} from "../projection/view_types.ts";

/** A page of a thread's items, newest last; `before` continues towards older items. */
export async function history(
  ctx: ServiceContext,
  threadId: string,
  options: { limit?: number; before?: string } = {},
): Promise<{ items: ThreadItem[]; before?: string; hasMore: boolean }> {
  const limit = pageLimit(options.limit, 50, 500);
  const actor = await ctx.actors.fresh(threadId);
  const items = actor.snapshot().items;
  let end = items.length;
  if (options.before !== undefined) {
    const at = items.findIndex((item) => item.id === options.before);
    if (at < 0) throw new FloretError("invalid_input", `Unknown history cursor: ${options.before}`);
    end = at;
  }
  const start = Math.max(0, end - limit);
  const page = items.slice(start, end);
  const result: { items: ThreadItem[]; before?: string; hasMore: boolean } = {
    items: page,
    hasMore: start > 0,
  };
  if (start > 0) result.before = page[0].id;
  return result;
}

/** Threads, most recently updated first. The cursor is opaque. */
export async function list(
  ctx: ServiceContext,
  options: { limit?: number; cursor?: string } = {},
): Promise<{ threads: ThreadSummary[]; cursor?: string }> {
  const limit = pageLimit(options.limit, 50, 500);
  const after = options.cursor === undefined ? undefined : decodeCursor(options.cursor);
  const rows = await ctx.journal.recentlyUpdated(limit + 1, after);
  const page = rows.slice(0, limit);
  const records = await ctx.journal.threads(page.map((row) => row.threadId));
  const threads: ThreadSummary[] = [];
  for (const record of records) {
    if (!record || record.deleted) continue;
    threads.push(summarize(record, ctx.actors.loaded(record.id)?.status ?? record.status));
  }
  const result: { threads: ThreadSummary[]; cursor?: string } = { threads };
  if (rows.length > limit) {
    const last = page[page.length - 1].key;
    result.cursor = `${last[1]}~${last[2]}`;
  }
  return result;
}

function summarize(record: ThreadRecord, status: ThreadStatus): ThreadSummary {
  const summary: ThreadSummary = {
    threadId: record.id,
    ...titleStateOf(record),
    status,
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
  };
  if (record.parentThreadId) summary.parentThreadId = record.parentThreadId;
  return summary;
}

function decodeCursor(cursor: string): ReturnType<typeof keys.updated> {
  const match = /^(\d+)~(thread_[0-9a-z]+)$/.exec(cursor);
  if (!match) throw new FloretError("invalid_input", `Invalid list cursor: ${cursor}`);
  return keys.updated(Number(match[1]), match[2]);
}

function pageLimit(limit: number | undefined, fallback: number, max: number): number {
  if (limit === undefined) return fallback;
  if (!Number.isInteger(limit) || limit < 1 || limit > max) {
    throw new FloretError(
      "invalid_input",
      `Page limit must be an integer from 1 to ${max}: ${limit}`,
    );
  }
  return limit;
}

/** Context figures: window, an estimate of the next request, usage the provider confirmed. */
export async function context(
  ctx: ServiceContext,
  threadId: string,
  windowTokens: number,
): Promise<ContextFigures> {
  const actor = await ctx.actors.fresh(threadId);
  const messages = actor.history.messages("", "");
  let estimateTokens = 0;
  for (const message of messages) estimateTokens += roughTokenCount(message.json);
  const totals = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
  let confirmed: Usage | undefined;
  for (const turn of actor.view.turns) {
    if (!turn.usage) continue;
    confirmed = turn.usage;
    totals.inputTokens += turn.usage.inputTokens ?? 0;
    totals.outputTokens += turn.usage.outputTokens ?? 0;
    totals.cacheReadTokens += turn.usage.cacheReadTokens ?? 0;
    totals.cacheWriteTokens += turn.usage.cacheWriteTokens ?? 0;
  }
  const result: ContextFigures = {
    windowTokens,
    estimateTokens,
    totals,
    compactions: [],
  };
  if (confirmed) result.confirmed = { ...confirmed };
  return result;
}

/**
 * The full output of a tool call that reached the model shortened.
 *
 * @throws {FloretError} `invalid_input` when the thread has no such artifact
 */
export async function artifact(
  ctx: ServiceContext,
  threadId: string,
  artifactId: unknown,
): Promise<Artifact> {
  await ctx.actors.fresh(threadId);
  const found = typeof artifactId === "string"
    ? await ctx.journal.value<Artifact>(
      keys.artifact(threadId, artifactId),
      artifactShape,
      "artifact",
    )
    : null;
  if (!found) {
    throw new FloretError(
      "invalid_input",
      `No artifact ${String(artifactId)} in thread ${threadId}`,
    );
  }
  return found;
}

/** Resolves once the thread is idle or waiting; rejects with `timeout` or the signal's reason. */
export async function waitForIdle(
  ctx: ServiceContext,
  threadId: string,
  options: { signal?: AbortSignal; timeoutMs?: number } = {},
): Promise<ThreadView> {
  const actor = await ctx.actors.get(threadId);
  const deadline = options.timeoutMs === undefined ? undefined : Date.now() + options.timeoutMs;
  for (;;) {
    options.signal?.throwIfAborted();
    // A turn run by another host is only seen by reading the store again.
    if (!actor.run) await actor.exclusive(() => actor.sync());
    actor.assertLive();
    if ((actor.status === "idle" || actor.status === "waiting") && !actor.run) {
      return actor.snapshot();
    }
    const remaining = deadline === undefined ? undefined : deadline - Date.now();
    if (remaining !== undefined && remaining <= 0) {
      throw new FloretError(
        "timeout",
        `Thread did not become idle in ${options.timeoutMs} ms: ${threadId}`,
      );
    }
    const poll = actor.runningElsewhere ? REMOTE_POLL_MS : undefined;
    await waitOnce(actor.nextStatusChange(), minDefined(remaining, poll), options.signal);
  }
}

/** How often a host polls the store for a turn that another host runs. */
export const REMOTE_POLL_MS = 250;

function minDefined(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined ? b : b === undefined ? a : Math.min(a, b);
}

function waitOnce(
  change: Promise<void>,
  ms: number | undefined,
  signal: AbortSignal | undefined,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = ms === undefined ? undefined : setTimeout(finish, ms);
    const onAbort = (): void => {
      cleanup();
      reject(signal!.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
    change.then(finish);
    function cleanup(): void {
      if (timer !== undefined) clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
    }
    function finish(): void {
      cleanup();
      resolve();
    }
  });
}
