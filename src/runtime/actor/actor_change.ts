/**
 * What an actor commits: the change its callers plan, and the stamps the
 * actor puts on it (the entries' `seq` and time, the record's `seq` and this
 * host's lease) before it goes to the journal.
 *
 * @module
 */
import { nowIso } from "../../journal/now_iso.ts";
import { stampEntries } from "../../journal/entry_stamp.ts";
import type { Entry, NewEntry } from "../../journal/entries.ts";
import type { RequestRecord } from "../../journal/journal.ts";
import type { ThreadRecord } from "../../journal/thread_record.ts";
import type { KvKey } from "../../spi/kv_store.ts";
import { type Ownership, stampLease } from "./ownership.ts";

/** One change to commit: the new record and what goes with it. */
export interface ActorChange {
  /** The new record; `null` appends entries under a check of the current one (see Journal.commit). */
  record: ThreadRecord | null;
  entries?: NewEntry[];
  request?: { scope: string; key: string; value: RequestRecord };
  set?: { key: KvKey; value: unknown }[];
  delete?: KvKey[];
  /**
   * The entries (and their array) were built for this commit alone and nobody
   * else holds them (a run's step and results): the actor stamps `seq` and
   * `at` on them instead of copying each one. A re-plan stamps them again.
   */
  fresh?: boolean;
  /**
   * The record was built for this commit alone and nobody else holds it (an
   * admission's or a turn end's): the actor stamps `seq` and the lease on it
   * in place instead of copying it (the same keys in the same order).
   */
  ownRecord?: boolean;
}

/** A change with its stamps: what the journal commits, and the seq of its last entry. */
export interface StampedChange {
  entries: Entry[];
  record: ThreadRecord | null;
  seq: number;
}

/**
 * Stamps a change planned after entry `lastSeq`: its entries are numbered
 * from there and timed now, and the record (copied, unless the change owns
 * it) gets the last seq and this host's lease.
 *
 * @param change the planned change
 * @param lastSeq the seq of the thread's last entry
 * @param ownership this host, the owner of the lease
 */
export function stampChange(
  change: ActorChange,
  lastSeq: number,
  ownership: Ownership,
): StampedChange {
  const entries = stampEntries(change.entries ?? [], change.fresh === true, lastSeq, nowIso());
  const seq = lastSeq + entries.length;
  // The commit's own copy of the record (or the record itself, when the caller made it
  // for this commit): its seq and lease are stamped on it.
  let record = change.record;
  if (record !== null) {
    // A lone spread, then `seq` (the keys and order of `{ ...record, seq }`, without the
    // runtime's copy that a spread followed by a field in one literal takes).
    if (change.ownRecord !== true) record = { ...record };
    record.seq = seq;
    // A stop request lives as long as its turn: whatever ends the turn clears it.
    const stop = record.stopRequest;
    if (stop && record.active?.turnId !== stop.turnId) delete record.stopRequest;
    stampLease(record, ownership);
  }
  return { entries, record, seq };
}
