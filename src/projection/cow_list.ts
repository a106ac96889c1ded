/**
 * A list that hands out frozen copies of itself in time proportional to its
 * length divided by {@link CHUNK}, not to its length.
 *
 * Why: every command returns the whole view of its thread (`send`, `respond`,
 * `waitForIdle`, `view`...). Copying 60,000 items and 20,000 turns for each
 * of them made a `send` on a long thread cost 85× a `send` on a short one,
 * although the admission itself reads no history. The view model keeps its
 * items and turns here instead: the list is cut into chunks, {@link share}
 * copies only the array of chunks, and a write to a chunk that has been
 * shared copies that chunk first (copy on write). The elements themselves are
 * never changed in place by the view model (it replaces them), so a shared
 * chunk stays exactly as it was when it was shared.
 *
 * @module
 */

/** Elements per chunk: a share copies length / CHUNK references, a write at most CHUNK. */
export const CHUNK = 128;

/** A list's contents at the moment it was shared; nothing ever changes it. */
export interface SharedList<T> {
  /** The chunks, in order; only the last may be shorter than {@link CHUNK}. */
  readonly chunks: readonly (readonly T[])[];
  /** How many elements the chunks hold. */
  readonly length: number;
}

/** An array-like list whose contents can be shared cheaply; see the module doc. */
export class CowList<T> {
  #chunks: T[][] = [];
  /** The share generation each chunk was last copied in; a chunk is ours while it equals `#epoch`. */
  #owners: number[] = [];
  #epoch = 0;
  #length = 0;

  /** How many elements the list holds. */
  get length(): number {
    return this.#length;
  }

  /**
   * The element at an index; a negative index counts from the end, as `Array.at`.
   *
   * @param index position in the list
   * @returns the element, or `undefined` outside the list
   */
  at(index: number): T | undefined {
    const at = index < 0 ? this.#length + index : index;
    if (at < 0 || at >= this.#length) return undefined;
    return this.#chunks[(at / CHUNK) | 0][at % CHUNK];
  }

  /**
   * Replaces the element at an index inside the list.
   *
   * @param index position, `0 ≤ index < length`
   * @param value the new element
   */
  set(index: number, value: T): void {
    if (index < 0 || index >= this.#length) throw new RangeError(`Index ${index} out of range`);
    this.#own((index / CHUNK) | 0)[index % CHUNK] = value;
  }

  /**
   * Appends one element.
   *
   * @param value the element
   */
  push(value: T): void {
    const chunk = (this.#length / CHUNK) | 0;
    if (chunk === 0 && this.#chunks.length === 0) {
      // Literals of one element: a push onto an empty array reserves 17 slots,
      // and nearly every list (a thread's items and turns) has one chunk.
      this.#chunks = [[value]];
      this.#owners = [this.#epoch];
    } else if (chunk === this.#chunks.length) {
      this.#chunks.push([value]);
      this.#owners.push(this.#epoch);
    } else this.#own(chunk).push(value);
    this.#length++;
  }

  /**
   * Removes the element at an index; later elements move one place down.
   * Rebuilds the chunks from that index on (removals are rare: a failed
   * attempt's live items).
   *
   * @param index position, `0 ≤ index < length`
   */
  removeAt(index: number): void {
    if (index < 0 || index >= this.#length) throw new RangeError(`Index ${index} out of range`);
    const tail = this.slice(index + 1, this.#length);
    const first = (index / CHUNK) | 0;
    const kept = this.#chunks[first].slice(0, index % CHUNK);
    this.#chunks.length = first;
    this.#owners.length = first;
    this.#length = first * CHUNK;
    for (const value of kept) this.push(value);
    for (const value of tail) this.push(value);
  }

  /**
   * The elements from `start` to `end` (exclusive) as a new array, as `Array.slice`.
   *
   * @param start first index (default 0)
   * @param end index after the last (default the length)
   * @returns a plain array the caller owns (the elements themselves are shared)
   */
  slice(start = 0, end: number = this.#length): T[] {
    const from = Math.max(0, start < 0 ? this.#length + start : start);
    const to = Math.min(this.#length, end < 0 ? this.#length + end : end);
    const out: T[] = [];
    for (let at = from; at < to; at++) out.push(this.#chunks[(at / CHUNK) | 0][at % CHUNK]);
    return out;
  }

  /**
   * A new array of `fn` applied to each element, as `Array.map`.
   *
   * @param fn maps one element
   * @returns the mapped elements, in order
   */
  map<U>(fn: (value: T) => U): U[] {
    const out: U[] = [];
    for (const chunk of this.#chunks) {
      for (let i = 0; i < chunk.length; i++) out.push(fn(chunk[i]));
    }
    return out;
  }

  /** The elements in order. */
  *[Symbol.iterator](): Iterator<T> {
    for (const chunk of this.#chunks) yield* chunk;
  }

  /**
   * The list as it is now, frozen: later writes copy the chunks they touch
   * instead of changing these.
   *
   * @returns the contents, sharing every chunk
   */
  share(): SharedList<T> {
    this.#epoch++;
    return { chunks: this.#chunks.slice(), length: this.#length };
  }

  /** The chunk at an index, copied first when a share still holds it. */
  #own(chunk: number): T[] {
    if (this.#owners[chunk] !== this.#epoch) {
      this.#chunks[chunk] = this.#chunks[chunk].slice();
      this.#owners[chunk] = this.#epoch;
    }
    return this.#chunks[chunk];
  }
}

/**
 * A plain array of copies of a shared list's elements.
 *
 * @param shared the list's contents at some moment
 * @param copy makes the caller's own copy of one element
 * @returns a new array the caller may change freely
 */
export function copyShared<T>(shared: SharedList<T>, copy: (value: T) => T): T[] {
  // Sized once: pushing grows the array by half again each time it fills,
  // leaving the smaller arrays behind as garbage (a long thread's view is
  // copied whenever a host reads it).
  const out: T[] = new Array(shared.length);
  let at = 0;
  for (const chunk of shared.chunks) {
    for (let i = 0; i < chunk.length; i++) out[at++] = copy(chunk[i]);
  }
  return out;
}
