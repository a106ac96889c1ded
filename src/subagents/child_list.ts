/**
 * `list({ parentThreadId })`: the children of one thread, read through the
 * child index, most recently updated first.
 *
 * @module
 */
import { FloretError } from "../errors.ts";
import { keys } from "../journal/keys.ts";
import type { ThreadRecord } from "../journal/thread_record.ts";
import type { ThreadSummary } from "../projection/view_types.ts";
import { summarize } from "../runtime/queries/thread_summary.ts";
import type { ServiceContext } from "../runtime/commands/service_context.ts";

/**
 * The children of one thread, a page at a time. The cursor names the last
 * child of the page by its update time and id.
 *
 * @throws {FloretError} `thread_not_found` when the parent does not exist, was
 *   deleted, or belongs to another tenant than `tenant`
 */
export async function listChildren(
  ctx: ServiceContext,
  parentThreadId: string,
  limit: number,
  cursor: string | undefined,
  tenant?: string,
): Promise<{ threads: ThreadSummary[]; cursor?: string }> {
  // A deleted parent is gone like a missing one, as it is for view and history.
  const parent = typeof parentThreadId === "string"
    ? await ctx.journal.thread(parentThreadId)
    : null;
  // Another tenant's parent is as missing as a deleted one: no existence leak.
  if (
    !parent || parent.record.deleted || (tenant !== undefined && parent.record.tenant !== tenant)
  ) {
    throw new FloretError("thread_not_found", `Thread not found: ${String(parentThreadId)}`);
  }
  const ids = await ctx.journal.indexed(keys.childrenOf(parentThreadId));
  const records = (await ctx.journal.threads(ids)).filter(
    (record): record is ThreadRecord => record !== null && !record.deleted,
  );
  // Most recently updated first, ties by id, so a cursor names one place in the order.
  const order = (record: ThreadRecord): string => `${record.updatedAt}~${record.id}`;
  records.sort((a, b) => (order(a) < order(b) ? 1 : order(a) > order(b) ? -1 : 0));
  const start = cursor === undefined ? 0 : records.findIndex((record) => order(record) < cursor);
  const rest = start < 0 ? [] : records.slice(start);
  const page = rest.slice(0, limit);
  const threads = page.map((record) =>
    summarize(record, ctx.actors.loaded(record.id)?.status ?? record.status)
  );
  const result: { threads: ThreadSummary[]; cursor?: string } = { threads };
  if (rest.length > limit) result.cursor = order(page[page.length - 1]);
  return result;
}
