/**
 * An ordered set of strings kept in bounded sorted chunks, so an insert or a
 * delete moves at most one chunk instead of the whole key list (a flat sorted
 * array costs O(store) per new key, which a long-lived memory store feels).
 *
 * @module
 */

/** Chunks split past this many keys. */
const MAX_CHUNK = 512;

/** Sorted, unique strings compared with `<` (byte order for binary strings). */
export class SortedIndex {
  #chunks: string[][] = [];
  // Where the last insert put its id (chunk, index), or chunk -1 after any
  // other change: a thread's entries arrive in seq order, each landing right
  // after the one before, so the next insert is checked there first.
  #hintChunk = -1;
  #hintIndex = -1;

  /** Adds `id` (which must not be present yet). */
  insert(id: string): void {
    const chunks = this.#chunks;
    if (chunks.length === 0) {
      chunks.push([id]);
      this.#hintChunk = 0;
      this.#hintIndex = 0;
      return;
    }
    let c = this.#hintChunk;
    let i = this.#hintIndex + 1;
    if (!this.#fitsAfterHint(id)) {
      c = chunks.length - 1;
      const last = chunks[c];
      // Past every id (a thread's `updated` marker, whose time only grows): no search.
      if (last[last.length - 1] < id) i = last.length;
      else {
        c = Math.min(this.#chunkFor(id), c);
        i = lowerBound(chunks[c], id);
      }
    }
    const chunk = chunks[c];
    if (i === chunk.length) chunk.push(id);
    else chunk.splice(i, 0, id);
    this.#hintChunk = c;
    this.#hintIndex = i;
    if (chunk.length > MAX_CHUNK) {
      chunks.splice(c + 1, 0, chunk.splice(chunk.length >>> 1));
      this.#hintChunk = -1;
    }
  }

  /** Whether `id` belongs right after the last inserted id (no search needed). */
  #fitsAfterHint(id: string): boolean {
    const c = this.#hintChunk;
    if (c < 0) return false;
    const chunk = this.#chunks[c];
    const next = this.#hintIndex + 1;
    if (!(chunk[next - 1] < id)) return false;
    if (next < chunk.length) return id < chunk[next];
    // At the chunk's end: any position between it and the next chunk's first id is in order.
    return c + 1 === this.#chunks.length || id < this.#chunks[c + 1][0];
  }

  /** Removes `id` if present. */
  remove(id: string): void {
    const c = this.#chunkFor(id);
    const chunk = this.#chunks[c];
    if (!chunk) return;
    const i = lowerBound(chunk, id);
    if (chunk[i] !== id) return;
    chunk.splice(i, 1);
    // Positions after `i` (and chunk numbers, if the chunk goes) have moved.
    this.#hintChunk = -1;
    if (chunk.length === 0) this.#chunks.splice(c, 1);
  }

  /** Ids with `lower <= id < upper`, ascending or descending. */
  *range(lower: string, upper: string, reverse: boolean): Generator<string> {
    if (reverse) {
      for (let c = Math.min(this.#chunkFor(upper), this.#chunks.length - 1); c >= 0; c--) {
        const chunk = this.#chunks[c];
        for (let i = lowerBound(chunk, upper) - 1; i >= 0; i--) {
          if (chunk[i] < lower) return;
          yield chunk[i];
        }
      }
      return;
    }
    for (let c = this.#chunkFor(lower); c < this.#chunks.length; c++) {
      const chunk = this.#chunks[c];
      for (let i = lowerBound(chunk, lower); i < chunk.length; i++) {
        if (chunk[i] >= upper) return;
        yield chunk[i];
      }
    }
  }

  /** Empties the index. */
  clear(): void {
    this.#chunks = [];
    this.#hintChunk = -1;
  }

  /** The first chunk whose last id is >= `id` (or the chunk count when none is). */
  #chunkFor(id: string): number {
    let lo = 0;
    let hi = this.#chunks.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const chunk = this.#chunks[mid];
      if (chunk[chunk.length - 1] < id) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

function lowerBound(sorted: string[], id: string): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid] < id) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
