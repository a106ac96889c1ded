/**
 * Range reads over a thread's path: its fork sources' entries up to each
 * fork's base, then its own. Every read is a range scan keyed by `seq`, so a
 * reader pays for the entries it asks for, never for the ones before them.
 *
 * @module
 */
import { FloretError } from "../errors.ts";
import type { Entry } from "./entries.ts";
import type { Journal } from "./journal.ts";
import type { ThreadRecord } from "./thread_record.ts";

/** Past every real seq (the key codec takes safe integers only). */
const END = Number.MAX_SAFE_INTEGER;

/** Entries per range scan when a whole path is read. */
export const LOAD_BATCH = 4096;

/** The part of a path one thread's own log holds: `from <= seq < to`. */
interface Segment {
  threadId: string;
  from: number;
  to: number;
}

/** Reads entries of one thread's path by seq range. */
export class PathReader {
  readonly #journal: Journal;
  /** Oldest first. */
  readonly #segments: Segment[];

  private constructor(journal: Journal, segments: Segment[]) {
    this.#journal = journal;
    this.#segments = segments;
  }

  /**
   * Reads the fork chain of a thread (one record per fork level).
   *
   * @throws {FloretError} `storage_failure` when a fork source is missing
   */
  static async open(journal: Journal, record: ThreadRecord): Promise<PathReader> {
    const segments: Segment[] = [];
    let current = record;
    let to = END;
    for (;;) {
      const base = current.base;
      segments.unshift({ threadId: current.id, from: base ? base.seq + 1 : 1, to });
      if (!base) return new PathReader(journal, segments);
      to = Math.min(to, base.seq + 1);
      const source = await journal.thread(base.threadId);
      if (!source) {
        throw new FloretError("storage_failure", `Fork source is missing: ${base.threadId}`);
      }
      current = source.record;
    }
  }

  /**
   * Entries with `from <= seq < to`, oldest first (newest first with
   * `reverse`), at most `limit`: one range scan per fork level touched.
   */
  async range(
    from: number,
    to: number,
    options: { reverse?: boolean; limit?: number } = {},
  ): Promise<Entry[]> {
    const limit = options.limit ?? Infinity;
    const ordered = options.reverse ? [...this.#segments].reverse() : this.#segments;
    const out: Entry[] = [];
    for (const segment of ordered) {
      const lower = Math.max(from, segment.from);
      const upper = Math.min(to, segment.to);
      if (lower >= upper) continue;
      const want = limit - out.length;
      const rows = await this.#journal.entryRange(segment.threadId, lower, upper, {
        reverse: options.reverse,
        limit: want === Infinity ? undefined : want,
      });
      out.push(...rows);
      if (out.length >= limit) break;
    }
    return out;
  }

  /**
   * Every entry of the path in order, handed over a batch at a time: large
   * range scans, each batch dropped once `apply` has taken it, so a long
   * path is never held (or collected) whole.
   *
   * @param apply takes each batch, oldest first
   * @param batch entries per range scan
   * @returns the seq of the last entry (0 when there is none)
   */
  async forEach(apply: (entries: Entry[]) => void, batch = LOAD_BATCH): Promise<number> {
    let next = 1;
    for (;;) {
      const rows = await this.range(next, END, { limit: batch });
      if (rows.length === 0) return next - 1;
      apply(rows);
      next = rows[rows.length - 1].seq + 1;
      if (rows.length < batch) return next - 1;
    }
  }

  /** The seq of the path's last entry (0 for an empty path); one reverse scan of one row. */
  async lastSeq(): Promise<number> {
    const [last] = await this.range(1, END, { reverse: true, limit: 1 });
    return last?.seq ?? 0;
  }

  /** The first entry at or after `seq`, if any. */
  async firstFrom(seq: number): Promise<Entry | undefined> {
    const [entry] = await this.range(seq, END, { limit: 1 });
    return entry;
  }
}
