/**
 * Read-only queries: history pages, the thread list, context figures, and
 * waiting for a thread to become idle. All derived from the journal.
 *
 * @module
 */
import { FloretError } from "../../errors.ts";
import { keys } from "../../journal/keys.ts";
import { artifactShape } from "../../journal/stored_shapes.ts";
import type { Agent } from "../../config/agent.ts";
import type { ThreadRecord } from "../../journal/thread_record.ts";
import { contextFigures } from "../actor/context_figures.ts";
import { settleOrphan } from "../turns/settle_turn.ts";
import { retryStale } from "../actor/stale_retry.ts";
import type { ThreadActor } from "../actor/thread_actor.ts";
import type { ServiceContext } from "../commands/service_context.ts";
import { listChildren } from "../../subagents/child_list.ts";
import { listRoots } from "./root_list.ts";
import { coldHistoryPage, type HistoryPage } from "./cold_history.ts";
import type { ViewReader } from "../../projection/view/view_model.ts";
import { copyItem } from "../../projection/view/item_copy.ts";
import type {
  Artifact,
  ContextFigures,
  ThreadSummary,
  ThreadView,
} from "../../projection/view/view_types.ts";

/**
 * A page of a thread's items, newest last; `before` continues towards older
 * items. It costs what it returns: an actor in memory gives the page from its
 * view by index; a thread not in memory is read from the journal, only the
 * turns the page covers (see {@link coldHistoryPage}).
 *
 * @throws {FloretError} `invalid_input` for a bad limit or an unknown cursor;
 *   `thread_not_found` for a missing or deleted thread
 */
export async function history(
  ctx: ServiceContext,
  threadId: string,
  options: { limit?: number; before?: string } = {},
): Promise<HistoryPage> {
  const limit = pageLimit(options.limit, 50, 500);
  if (!ctx.actors.loaded(threadId)) {
    const current = await ctx.journal.thread(threadId);
    if (!current || current.record.deleted) {
      throw new FloretError("thread_not_found", `Thread not found: ${threadId}`);
    }
    const page = await coldHistoryPage(ctx.journal, current.record, limit, options.before);
    if (page) return page;
  }
  const actor = await ctx.actors.fresh(threadId);
  return warmPage(actor.view, limit, options.before);
}

/** A page from a view in memory: the cursor by index, only the page's items copied. */
function warmPage(view: ViewReader, limit: number, before: string | undefined): HistoryPage {
  let end = view.items.length;
  if (before !== undefined) {
    const at = view.indexOf(before);
    if (at === undefined) {
      throw new FloretError("invalid_input", `Unknown history cursor: ${before}`);
    }
    end = at;
  }
  const start = Math.max(0, end - limit);
  const page: HistoryPage = {
    items: view.items.slice(start, end).map(copyItem),
    hasMore: start > 0,
  };
  if (start > 0) page.before = page.items[0].id;
  return page;
}

/**
 * Root threads (or, with `parentThreadId`, that thread's children), most
 * recently updated first. The cursor is opaque.
 */
export async function list(
  ctx: ServiceContext,
  options: { limit?: number; cursor?: string; parentThreadId?: string; tenant?: string } = {},
): Promise<{ threads: ThreadSummary[]; cursor?: string }> {
  const limit = pageLimit(options.limit, 50, 500);
  const { tenant } = options;
  if (options.parentThreadId !== undefined) {
    return await listChildren(ctx, options.parentThreadId, limit, options.cursor, tenant);
  }
  return await listRoots(ctx, limit, tenant, options.cursor);
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

/** Context figures: window, estimate of the next request, confirmed usage, totals, compactions. */
export async function context(
  ctx: ServiceContext,
  threadId: string,
  agentOf: (record: ThreadRecord, lastRun: Agent | undefined) => Agent | Promise<Agent | undefined>,
): Promise<ContextFigures> {
  const actor = await ctx.actors.fresh(threadId);
  // The thread's own agent (a child's is its sub-agent, not the host's), else the last run's.
  const agent = await agentOf(actor.record, actor.agent);
  return contextFigures(actor.history, actor.contextReader, agent ?? actor.agent);
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
  // An actor in memory is taken as it is, without the async lookup's frame.
  const actor = ctx.actors.loaded(threadId) ?? await ctx.actors.get(threadId);
  const deadline = options.timeoutMs === undefined ? undefined : Date.now() + options.timeoutMs;
  for (;;) {
    options.signal?.throwIfAborted();
    // Shutdown wakes every waiter: a closed host answers `host_closed`, not a read of its closed store.
    ctx.assertOpen();
    // A turn run by another host is only seen by reading the store again.
    if (!actor.run) await actor.exclusive(() => actor.sync());
    actor.assertLive();
    // A turn whose host is gone (another host's lease lapsed) runs nowhere and no status
    // change would ever come: settle it here, as any command on the thread would. (This
    // host's own orphans are settled by recovery at open, or by the store probe after a
    // failed commit.)
    if (actor.abandoned && lapsedElsewhere(actor) && !ctx.gate.deferred) {
      await retryStale(() => actor.exclusive(() => settleOrphan(actor)));
    }
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

/** Whether the active turn belongs to another host (so only its lapsed lease makes it abandoned). */
function lapsedElsewhere(actor: ThreadActor): boolean {
  const owner = actor.record.active?.owner;
  return owner !== undefined && owner !== actor.ownership.hostId;
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
  // Nothing to race (no deadline, no poll, no signal): the change itself is the wait.
  if (ms === undefined && signal === undefined) return change;
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
