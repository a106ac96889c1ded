/**
 * Reading a gateway's stream with every read bounded by the attempt's abort
 * signal. A gateway may never answer `next()` and may ignore its signal; the
 * read must still end when the engine's timers or a cancel abort it. One
 * listener serves every read of the attempt: a listener per read (or a race
 * per read against one shared promise) costs time or memory on each event of
 * a long stream.
 *
 * @module
 */

/** Reads an async iterator; each read rejects with the signal's reason once it aborts. */
export class BoundedReads<T> {
  readonly #iterator: AsyncIterator<T>;
  readonly #signal: AbortSignal;
  #rejectPending: ((reason: unknown) => void) | undefined;

  /**
   * @param iterator the stream (host code)
   * @param signal aborted by timeouts, cancel and shutdown; never reset
   */
  constructor(iterator: AsyncIterator<T>, signal: AbortSignal) {
    this.#iterator = iterator;
    this.#signal = signal;
    signal.addEventListener("abort", () => this.#rejectPending?.(signal.reason), { once: true });
  }

  /**
   * The next result, or the signal's reason as soon as it aborts.
   *
   * @returns what the iterator answered
   */
  next(): Promise<IteratorResult<T>> {
    if (this.#signal.aborted) return Promise.reject(this.#signal.reason);
    return new Promise<IteratorResult<T>>((resolve, reject) => {
      this.#rejectPending = reject;
      this.#iterator.next().then(resolve, reject);
    });
  }
}
