/**
 * Numbering and timestamping of the entries a commit appends.
 *
 * @module
 */
import type { Entry, NewEntry } from "./entries.ts";

/**
 * Gives each entry its `seq` (after `lastSeq`, in order) and the commit's time.
 *
 * @param entries the commit's new entries
 * @param fresh whether the entries (and their array) were made for this commit
 *   alone: then they are numbered in place (same fields, same order as a copy
 *   would have) and the same array is returned, nothing copied
 * @param lastSeq the seq of the path's last entry so far
 * @param at the commit's timestamp
 * @returns the stamped entries
 */
export function stampEntries(
  entries: readonly NewEntry[],
  fresh: boolean,
  lastSeq: number,
  at: string,
): Entry[] {
  let seq = lastSeq;
  if (!fresh) return entries.map((entry) => ({ ...entry, seq: ++seq, at }) as Entry);
  const stamped = entries as Entry[];
  for (let i = 0; i < stamped.length; i++) {
    stamped[i].seq = ++seq;
    stamped[i].at = at;
  }
  return stamped;
}
