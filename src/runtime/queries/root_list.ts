/**
 * The root thread list, most recently updated first, paged by a snapshot
 * cursor: each page continues the order as it stood when the listing began,
 * so threads updated meanwhile are listed once, at their earlier place (see
 * journal/list_order.ts for why, and its limits).
 *
 * @module
 */
import { keys } from "../../journal/keys.ts";
import {
  decodeListCursor,
  encodeListCursor,
  listedBefore,
  type ListPlace,
  placeAt,
} from "../../journal/list_order.ts";
import type { ThreadRecord } from "../../journal/thread_record.ts";
import type { KvKey } from "../../spi/kv_store.ts";
import type { ThreadSummary } from "../../projection/view/view_types.ts";
import type { ServiceContext } from "../commands/service_context.ts";
import { summarize } from "./thread_summary.ts";

/** Threads updated since the listing began that one page considers (the rest wait for later pages). */
const MOVED_LIMIT = 1000;

interface Candidate {
  place: ListPlace;
  record: ThreadRecord | null;
}

/**
 * A page of root threads (of `tenant`, when given), at most `limit`.
 *
 * @throws {FloretError} `invalid_input` for a cursor that is not one of ours
 */
export async function listRoots(
  ctx: ServiceContext,
  limit: number,
  tenant: string | undefined,
  cursorText: string | undefined,
): Promise<{ threads: ThreadSummary[]; cursor?: string }> {
  const cursor = cursorText === undefined ? undefined : decodeListCursor(cursorText);
  let at = cursor?.at;
  let last = cursor?.last;
  let after: KvKey | undefined = last ? keys.updated(last.time, last.threadId) : undefined;
  const threads: ThreadSummary[] = [];
  const listed = new Set<string>();
  // Threads updated since `at`, waiting for their earlier place in the order.
  let moved: Candidate[] = [];
  // Lists a candidate; true when the page was already full (it goes on the next one).
  const take = (candidate: Candidate): boolean => {
    const { record, place } = candidate;
    if (!record || record.deleted || record.parentThreadId || listed.has(record.id)) return false;
    // A tenant sees its own threads only; no tenant means every thread.
    if (tenant !== undefined && record.tenant !== tenant) return false;
    // One more root after a full page: there is a next page.
    if (threads.length === limit) return true;
    threads.push(summarize(record, ctx.actors.loaded(record.id)?.status ?? record.status));
    listed.add(record.id);
    last = place;
    return false;
  };
  const page = () => ({ threads, cursor: encodeListCursor({ at: at!, last: last! }) });
  // The index holds child threads too: read on until the page is full of roots.
  for (let chunk = 0;; chunk++) {
    const rows = await ctx.journal.recentlyUpdated(limit + 1, after);
    // A first page fixes the snapshot at the newest update it read (not the clock: the same
    // list gives the same cursor). An update after that read is newer (one in the same
    // millisecond as that one is the race left: it keeps its new place, before the cursor).
    at ??= rows.length > 0 ? (rows[0].key[1] as number) : 0;
    // Read after the rows: a thread that moved before they were read is found here.
    if (cursor || chunk > 0) moved = await movedSince(ctx, at, cursor?.last, moved);
    const records = await ctx.journal.threads(rows.map((row) => row.threadId));
    for (const [i, row] of rows.entries()) {
      const place = { time: row.key[1] as number, threadId: row.threadId };
      // Updated after the listing began: listed from `moved`, at its earlier place.
      if (place.time > at) continue;
      while (moved.length > 0 && listedBefore(moved[0].place, place)) {
        if (take(moved.shift()!)) return page();
      }
      if (take({ place, record: records[i] })) return page();
    }
    if (rows.length <= limit) {
      for (const candidate of moved) if (take(candidate)) return page();
      return { threads };
    }
    after = rows[rows.length - 1].key;
  }
}

/**
 * The threads updated after `at` whose place at `at` comes after `from`,
 * merged into `known` (newest place first; a thread already there stays).
 */
async function movedSince(
  ctx: ServiceContext,
  at: number,
  from: ListPlace | undefined,
  known: Candidate[],
): Promise<Candidate[]> {
  const rows = await ctx.journal.updatedAfter(at, MOVED_LIMIT);
  if (rows.length === 0) return known;
  const ids = new Set(known.map((candidate) => candidate.place.threadId));
  const fresh = rows.filter((row) => !ids.has(row.threadId));
  const records = await ctx.journal.threads(fresh.map((row) => row.threadId));
  const merged = [...known];
  for (const record of records) {
    if (!record) continue;
    const time = placeAt(record, at);
    if (time === undefined) continue; // created after the listing began
    const place = { time, threadId: record.id };
    if (from && !listedBefore(from, place)) continue; // its place was on an earlier page
    merged.push({ place, record });
  }
  return merged.sort((a, b) => (listedBefore(a.place, b.place) ? -1 : 1));
}
