/**
 * Commit versions for the local libSQL store, handed out from blocks that a
 * connection reserves in the counter row, so a commit does not rewrite that
 * row (one WAL page fewer per commit, and one statement fewer).
 *
 * The counter row holds the highest version any connection may have handed
 * out. A connection reserves a block by raising the row by
 * {@link VERSION_BLOCK} inside a write transaction, and keeps using the block
 * while the row still holds the block's end: the row only ever grows, so an
 * unchanged row means nobody reserved after it, and every version anyone
 * handed out so far is below the block. Once another writer (a second
 * connection, or an older engine that bumps the row by one per commit) has
 * raised the row, the next transaction reserves a fresh block above it. So a
 * later commit's version is always greater than every earlier commit's, across
 * processes too. Versions left unused in a block (at close, after a crash) are
 * skipped, never reused.
 *
 * @module
 */

/** How many versions one reservation covers. */
export const VERSION_BLOCK = 1024n;

/** The part of a reserved block this connection has not handed out yet. */
export interface Held {
  /** The next version to hand out. */
  next: bigint;
  /** The block's end, as stored in the counter row when it was reserved. */
  last: bigint;
}

/** The versions of one connection: what is left of its current block. */
export class VersionBlocks {
  #held: Held | undefined;

  /**
   * Starts taking versions inside an open write transaction.
   *
   * @param read returns the counter row's value (read under the write lock)
   * @param write stores a new block end in the counter row
   * @returns the lease for this transaction
   */
  lease(read: () => bigint, write: (last: bigint) => void): VersionLease {
    return new VersionLease(this.#held, read, write, (held) => {
      this.#held = held;
    });
  }

  /**
   * The held block, when it has a version left: a commit that runs outside a
   * transaction may take `next` only if its own statement finds the counter
   * row still at `last` (see libsql_fused.ts).
   *
   * @returns the block, or undefined when the next commit must reserve one
   */
  held(): Readonly<Held> | undefined {
    const held = this.#held;
    return held !== undefined && held.next <= held.last ? held : undefined;
  }

  /** Marks the held block's next version as used, by a commit that landed. */
  used(): void {
    this.#held!.next += 1n;
  }

  /**
   * Forgets the current block, after a transaction failed in a way that may
   * have left it committed or not: the next lease reserves a fresh block
   * above whatever the counter row then holds.
   */
  drop(): void {
    this.#held = undefined;
  }
}

/** The versions one write transaction takes; see {@link VersionBlocks.lease}. */
export class VersionLease {
  readonly #held: Held | undefined;
  readonly #read: () => bigint;
  readonly #write: (last: bigint) => void;
  readonly #adopt: (held: Held) => void;
  #next: bigint | undefined;
  #last = 0n;

  /** Use {@link VersionBlocks.lease}. */
  constructor(
    held: Held | undefined,
    read: () => bigint,
    write: (last: bigint) => void,
    adopt: (held: Held) => void,
  ) {
    this.#held = held;
    this.#read = read;
    this.#write = write;
    this.#adopt = adopt;
  }

  /**
   * The version the next landed commit of this transaction gets, reserving a
   * block first when none is left (the counter row is read once, on the first
   * call).
   *
   * @returns the version number (not yet taken: see {@link take})
   */
  peek(): bigint {
    if (this.#next === undefined) {
      const stored = this.#read();
      const held = this.#held;
      if (held !== undefined && held.last === stored && held.next <= held.last) {
        this.#next = held.next;
        this.#last = held.last;
        return held.next;
      }
      this.#next = stored + 1n;
      this.#last = stored;
    }
    if (this.#next > this.#last) {
      // Under the write lock the row holds this.#last: either the held
      // block's end (checked above) or what this transaction wrote.
      this.#last += VERSION_BLOCK;
      this.#write(this.#last);
    }
    return this.#next;
  }

  /** Marks the version from {@link peek} as used by a commit that landed. */
  take(): void {
    this.#next! += 1n;
  }

  /** Keeps what is left of the block for later transactions, once this one committed. */
  committed(): void {
    if (this.#next !== undefined) this.#adopt({ next: this.#next, last: this.#last });
  }
}
