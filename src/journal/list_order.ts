/**
 * Where a thread stands in the thread list, and how a list cursor keeps its
 * place while threads move.
 *
 * The list orders by most recent update (the `updated` index, keyed by
 * update time and id), so every update moves its thread to the front. A
 * cursor that only remembered the last key it listed skipped each thread
 * that moved past it before being listed (22 of 40 while they got turns).
 *
 * Why a snapshot cursor rather than a key that never moves (say, creation
 * time): the contract orders the list by most recent update, and a reader
 * paging through it wants that order. So the cursor remembers when the
 * listing began (`at`) and pages through the order as it stood then: a
 * thread updated after `at` is listed at its place before its update. That
 * place is one of its earlier update times, which its record keeps (a few of
 * them, see {@link noteEarlierUpdate}); a thread created after `at` was not
 * in the list then and is not listed (a new listing shows it first).
 *
 * Limits, said plainly: a thread updated more than {@link EARLIER_UPDATES}
 * times since the listing began is listed at its creation time instead
 * (possibly a second time, never skipped); an update in the same
 * millisecond as the newest one the first page read, or stamped by a host
 * whose clock lags, keeps its new place and may be missed by that listing.
 *
 * @module
 */
import { FloretError } from "../errors.ts";
import type { ThreadRecord } from "./thread_record.ts";

/** Earlier update times a record keeps. */
export const EARLIER_UPDATES = 16;

/**
 * Records on `record` (about to replace `previous`, with a new `updatedAt`)
 * where the thread stood before: `previous.updatedAt`, then its earlier ones.
 */
export function noteEarlierUpdate(record: ThreadRecord, previous: ThreadRecord): void {
  const before = Date.parse(previous.updatedAt);
  const older = previous.earlierUpdates ?? [];
  const times = [before];
  for (const time of older) {
    if (times.length >= EARLIER_UPDATES) break;
    times.push(time);
  }
  record.earlierUpdates = times;
}

/**
 * The thread's place in the list as it stood at `at` (its latest update time
 * not after `at`), or `undefined` when it did not exist then.
 */
export function placeAt(record: ThreadRecord, at: number): number | undefined {
  const updated = Date.parse(record.updatedAt);
  if (updated <= at) return updated;
  for (const time of record.earlierUpdates ?? []) {
    if (time <= at) return time;
  }
  const created = Date.parse(record.createdAt);
  // Moved more often than the record remembers: listed at its creation (never skipped).
  return created <= at ? created : undefined;
}

/** A place in the list: update time, then id (both descending). */
export interface ListPlace {
  time: number;
  threadId: string;
}

/** Whether `a` comes before `b` in the list (newer first; ties by id, descending). */
export function listedBefore(a: ListPlace, b: ListPlace): boolean {
  return a.time !== b.time ? a.time > b.time : a.threadId > b.threadId;
}

/** A list cursor: when the listing began, and the place of the last thread listed. */
export interface ListCursor {
  at: number;
  last: ListPlace;
}

/** The cursor's opaque text. */
export function encodeListCursor(cursor: ListCursor): string {
  return `${cursor.at}~${cursor.last.time}~${cursor.last.threadId}`;
}

/**
 * Reads a cursor (one from before snapshots, `time~id`, pages from its place).
 *
 * @throws {FloretError} `invalid_input` for text that is not a cursor
 */
export function decodeListCursor(text: string): ListCursor {
  const match = /^(?:(\d+)~)?(\d+)~(thread_[0-9a-z]+)$/.exec(text);
  if (!match) throw new FloretError("invalid_input", `Invalid list cursor: ${text}`);
  const time = Number(match[2]);
  const at = match[1] === undefined ? time : Number(match[1]);
  if (!Number.isSafeInteger(at) || !Number.isSafeInteger(time)) {
    throw new FloretError("invalid_input", `Invalid list cursor: ${text}`);
  }
  return { at, last: { time, threadId: match[3] } };
}
