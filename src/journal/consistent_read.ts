/**
 * Reads that must agree with what is known to be committed. The journal is
 * append-only and a thread record is never removed (a delete leaves a
 * tombstone), so some answers cannot be true: entries with a gap in their
 * `seq`, a path that ends before the record's own `seq` or before the last
 * entry this host saw commit, a record that vanished. A store that answers so
 * (a replica behind, a page cut short, a driver bug) is asked again a few
 * times; if it keeps answering so, the read fails `storage_failure`. Such an
 * answer is never taken as the thread's state: a host that cached it would
 * show a shortened thread and send the model a conversation without its start.
 *
 * @module
 */
import { FloretError } from "../errors.ts";
import type { Entry } from "./entries.ts";

/** A read contradicted what is known to be committed (retried by {@link consistentRead}). */
export class ContradictoryRead extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ContradictoryRead";
  }
}

/** Waits before each read again: the first retry comes at once, later ones a little later. */
const RETRY_DELAYS_MS: readonly number[] = [0, 25, 100];

/**
 * Runs `read` until it answers without a {@link ContradictoryRead}: at most
 * once more per retry delay.
 *
 * @param read one whole read (it starts from scratch each time)
 * @param what names the read in the error
 * @throws {FloretError} `storage_failure` when every attempt contradicted what is known
 */
export async function consistentRead<T>(read: () => Promise<T>, what: string): Promise<T> {
  for (let attempt = 0;; attempt++) {
    try {
      return await read();
    } catch (error) {
      if (!(error instanceof ContradictoryRead)) throw error;
      if (attempt >= RETRY_DELAYS_MS.length) {
        throw new FloretError(
          "storage_failure",
          `The store keeps answering a read of ${what} that contradicts what it committed: ${error.message}`,
          { cause: error },
        );
      }
      const delay = RETRY_DELAYS_MS[attempt];
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}

/**
 * Checks a path's entries as they are read, oldest first: their `seq` runs
 * 1, 2, 3… with no gap (a fork continues its source's numbering), and the
 * path reaches at least the seq every reader knows is committed.
 */
export class PathCheck {
  #next = 1;

  /**
   * Takes the next batch of entries.
   *
   * @throws {ContradictoryRead} when an entry is missing or out of order
   */
  accept(entries: readonly Entry[]): void {
    for (const entry of entries) {
      if (entry.seq !== this.#next) {
        throw new ContradictoryRead(`entry ${this.#next} is missing (the read gave ${entry.seq})`);
      }
      this.#next++;
    }
  }

  /** The seq of the last entry taken (0 before any). */
  get last(): number {
    return this.#next - 1;
  }

  /**
   * Ends the read.
   *
   * @param atLeast the seq known to be committed (the record's, or one this host saw land)
   * @throws {ContradictoryRead} when the path read ends before it
   */
  reaches(atLeast: number): void {
    if (this.last < atLeast) {
      throw new ContradictoryRead(
        `the journal read ends at entry ${this.last}, but entry ${atLeast} is committed`,
      );
    }
  }
}
