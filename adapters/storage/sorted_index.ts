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

  /** Adds `id` (which must not be present yet). */
  insert(id: string): void {
    if (this.#chunks.length === 0) {
      this.#chunks.push([id]);
      return;
    }
    const c = Math.min(this.#chunkFor(id), this.#chunks.length - 1);
    const chunk = this.#chunks[c];
    chunk.splice(lowerBound(chunk, id), 0, id);
    if (chunk.length > MAX_CHUNK) this.#chunks.splice(c + 1, 0, chunk.splice(chunk.length >>> 1));
  }

  /** Removes `id` if present. */
  remove(id: string): void {
    const c = this.#chunkFor(id);
    const chunk = this.#chunks[c];
    if (!chunk) return;
    const i = lowerBound(chunk, id);
    if (chunk[i] !== id) return;
    chunk.splice(i, 1);
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
