/**
 * `list({ parentThreadId })`: the children of one thread, read through the
 * child index, most recently updated first.
 *
 * @module
 */
import { FloretError } from "../errors.ts";
import { keys } from "../journal/keys.ts";
import type { ThreadRecord } from "../journal/thread_record.ts";
import {
  decodeListCursor,
  encodeListCursor,
  listedBefore,
  type ListPlace,
  placeAt,
} from "../journal/list_order.ts";
import type { ThreadSummary } from "../projection/view/view_types.ts";
import { summarize } from "../runtime/queries/thread_summary.ts";
import type { ServiceContext } from "../runtime/commands/service_context.ts";

/**
 * The children of one thread, a page at a time. The cursor names when the
 * listing began and the last child of the page by its place then.
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
  // A snapshot cursor, as for root threads (journal/list_order.ts): the order is the one of
  // when the listing began, so children that get turns meanwhile are listed once.
  const snapshot = cursor === undefined ? undefined : decodeListCursor(cursor);
  const at = snapshot?.at ??
    records.reduce((newest, record) => Math.max(newest, Date.parse(record.updatedAt)), 0);
  const placed: { place: ListPlace; record: ThreadRecord }[] = [];
  for (const record of records) {
    const time = placeAt(record, at);
    // Created after the listing began: a new listing shows it.
    if (time === undefined) continue;
    const place = { time, threadId: record.id };
    if (snapshot && !listedBefore(snapshot.last, place)) continue;
    placed.push({ place, record });
  }
  // Most recently updated first (as of `at`), ties by id, so a cursor names one place.
  placed.sort((a, b) => (listedBefore(a.place, b.place) ? -1 : 1));
  const page = placed.slice(0, limit);
  const threads = page.map(({ record }) =>
    summarize(record, ctx.actors.loaded(record.id)?.status ?? record.status)
  );
  const result: { threads: ThreadSummary[]; cursor?: string } = { threads };
  if (placed.length > limit) {
    result.cursor = encodeListCursor({ at, last: page[page.length - 1].place });
  }
  return result;
}
