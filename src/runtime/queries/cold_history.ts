/**
 * History pages of a thread that is not in memory, read from the journal by
 * seq range: the entries of the page's own turns, newest first, projected on
 * their own. Each `turn_started` carries the ordinal of its turn's first item,
 * so a page knows its ordinals without reading the turns before it. The
 * journal stays the only authority: nothing here is stored.
 *
 * @module
 */
import { FloretError } from "../../errors.ts";
import { idTime } from "../../identity/ids.ts";
import type { Entry, TurnStartedEntry } from "../../journal/entries.ts";
import type { Journal } from "../../journal/journal.ts";
import { PathReader } from "../../journal/path_reader.ts";
import type { ThreadRecord } from "../../journal/thread_record.ts";
import { type ItemOrigin, itemOrigin, madeBy } from "../../projection/view/item_ids.ts";
import { projectItems } from "../../projection/view/page_projection.ts";
import type { ThreadItem } from "../../projection/view/view_types.ts";

/** A page of items, newest last. */
export interface HistoryPage {
  items: ThreadItem[];
  before?: string;
  hasMore: boolean;
}

/**
 * Entries read by the first forward scan while looking for a cursor or a
 * turn's end (usually a few entries away); each further scan doubles, up to
 * {@link SCAN_BATCH_MAX}.
 */
const SCAN_BATCH = 32;
const SCAN_BATCH_MAX = 4096;

/**
 * Reads one history page of a thread from the journal alone.
 *
 * @param record the thread's current record (not deleted)
 * @param limit page size
 * @param before the id of the item the page ends before (exclusive)
 * @returns the page, or `undefined` when the journal predates turn ordinals
 *   (the caller then projects the whole path)
 * @throws {FloretError} `invalid_input` for a cursor that names no item
 */
export async function coldHistoryPage(
  journal: Journal,
  record: ThreadRecord,
  limit: number,
  before?: string,
): Promise<HistoryPage | undefined> {
  const path = await PathReader.open(journal, record);
  const last = await path.lastSeq();
  let hi = last;
  if (before !== undefined) {
    const origin = itemOrigin(before);
    const made = origin && last > 0 ? await findOrigin(path, origin, last) : undefined;
    if (!made) throw unknownCursor(before);
    hi = await turnEnd(path, made, last);
  }
  if (hi === 0) return { items: [], hasMore: false };
  // Read back a batch at a time until whole turns hold the page and the item before it.
  let read: Entry[] = [];
  let lo = hi + 1;
  let batch = 2 * limit + 16;
  let tried = 0;
  while (lo > 1) {
    const older = await path.range(1, lo, { reverse: true, limit: batch });
    if (older.length === 0) break;
    older.reverse();
    read = older.concat(read);
    lo = older[0].seq;
    batch *= 2;
    // The earliest turn start that says its ordinal (journals of earlier releases do not).
    const startAt = read.findIndex((entry) =>
      entry.kind === "turn_started" && entry.ordinal !== undefined
    );
    if (startAt < 0 || read[startAt].seq === tried) continue;
    const start = read[startAt] as TurnStartedEntry;
    tried = start.seq;
    const base = start.ordinal!;
    const items = projectItems(read.slice(startAt));
    const end = before === undefined ? items.length : items.findIndex((item) => item.id === before);
    if (end < 0) throw unknownCursor(before!);
    if (end < limit && base > 0) {
      // Older turns are needed; a start without an ordinal before this one cannot give them.
      if (read.slice(0, startAt).some((entry) => entry.kind === "turn_started")) return undefined;
      continue;
    }
    const from = Math.max(0, end - limit);
    const page: HistoryPage = {
      items: items.slice(from, end).map((item) => ({ ...item, ordinal: item.ordinal + base })),
      hasMore: base + from > 0,
    };
    if (page.hasMore) page.before = page.items[0].id;
    return page;
  }
  // A path that does not start with a turn: only an old or damaged journal.
  return undefined;
}

function unknownCursor(before: string): FloretError {
  return new FloretError("invalid_input", `Unknown history cursor: ${before}`);
}

/**
 * Finds the entry that made an item. Ids carry the time they were made and
 * an entry is committed after its ids are, so a binary search on entry times
 * lands just before it; a forward scan from there finds it. Clocks that went
 * backwards (another host's, an adjusted one) only make the search land
 * wrong: then the rest of the path is scanned, so the answer never is.
 */
async function findOrigin(
  path: PathReader,
  origin: ItemOrigin,
  last: number,
): Promise<Entry | undefined> {
  const time = idTime(origin.id);
  let lo = 1;
  if (time !== undefined) {
    let hi = last + 1;
    while (lo < hi) {
      const mid = Math.floor((lo + hi) / 2);
      const entry = await path.firstFrom(mid);
      if (!entry || entry.seq > last || Date.parse(entry.at) >= time) hi = mid;
      else lo = entry.seq + 1;
    }
  }
  return await scanFor(path, lo, last + 1, (entry) => madeBy(origin, entry)) ??
    await scanFor(path, 1, lo, (entry) => madeBy(origin, entry));
}

/** The seq of the end of the turn `made` belongs to (or of the path's end while it runs). */
async function turnEnd(path: PathReader, made: Entry, last: number): Promise<number> {
  const ended = await scanFor(
    path,
    made.seq,
    last + 1,
    (entry) =>
      (entry.kind === "turn_ended" && entry.turnId === made.turnId) ||
      (entry.kind === "turn_started" && entry.turnId !== made.turnId),
  );
  if (!ended) return last;
  return ended.kind === "turn_ended" ? ended.seq : ended.seq - 1;
}

/** The first entry in `[from, to)` that `match` accepts, read in forward batches. */
async function scanFor(
  path: PathReader,
  from: number,
  to: number,
  match: (entry: Entry) => boolean,
): Promise<Entry | undefined> {
  let next = from;
  let batch = SCAN_BATCH;
  while (next < to) {
    const rows = await path.range(next, to, { limit: batch });
    if (rows.length === 0) return undefined;
    const found = rows.find(match);
    if (found) return found;
    next = rows[rows.length - 1].seq + 1;
    batch = Math.min(2 * batch, SCAN_BATCH_MAX);
  }
  return undefined;
}
