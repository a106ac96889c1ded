/**
 * One read of a thread for its actor (thread_actor.ts): the record, then its
 * whole path folded into fresh projections, checked against what this host
 * already knows. A read that contradicts that knowledge throws
 * {@link ContradictoryRead}, so `consistentRead` reads again or refuses it
 * rather than let it replace the state held.
 *
 * @module
 */
import type { Journal, VersionedRecord } from "../../journal/journal.ts";
import { PathReader } from "../../journal/path_reader.ts";
import { ContradictoryRead, PathCheck } from "../../journal/consistent_read.ts";
import { QuietUntilSwapped } from "../../projection/view/quiet_sink.ts";
import { ThreadProjections } from "../../projection/thread_projections.ts";
import type { Publisher } from "./publisher.ts";

/** What a read of a thread found: its record and projections, and the last entry they reach. */
export interface ThreadRead {
  current: VersionedRecord;
  projections: ThreadProjections;
  last: number;
}

/**
 * Reads a thread's record and path.
 *
 * @param knownSeq the last seq this host saw land on the thread (`undefined` when it holds none)
 * @returns the read, or `null` when the thread does not exist or is deleted
 */
export async function readThread(
  journal: Journal,
  threadId: string,
  publisher: Publisher,
  knownSeq: number | undefined,
): Promise<ThreadRead | null> {
  const current = await journal.thread(threadId);
  if (!current) {
    // A delete leaves a tombstone: a record this host has held never goes missing.
    if (knownSeq !== undefined) throw new ContradictoryRead("the thread record is missing");
    return null;
  }
  if (current.record.deleted) return null;
  // Built aside, in batches of large range scans, and swapped in whole: readers in
  // between see the old projections; nobody hears the rebuild (subscribers resync).
  const sink = new QuietUntilSwapped(publisher);
  const projections = new ThreadProjections(sink);
  const path = await PathReader.open(journal, current.record);
  // The last entry first (one row): a run on another host appends without rewriting the
  // record, so only this tells how far the path reached before the pages were read.
  const tail = await path.lastSeq();
  const check = new PathCheck();
  const last = await path.forEach((entries) => {
    check.accept(entries);
    for (const entry of entries) projections.apply(entry);
  });
  // The record's seq, the tail read before, and every entry this host saw land are
  // committed (the journal only grows): the pages reach them all.
  check.reaches(Math.max(current.record.seq, tail, knownSeq ?? 0));
  sink.swapped();
  return { current, projections, last };
}
