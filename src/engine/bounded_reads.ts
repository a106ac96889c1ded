/**
 * Reading a gateway's stream with every read bounded by the attempt's abort
 * switch. A gateway may never answer `next()` and may ignore its signal; the
 * read must still end when the engine's timers or a cancel abort it. One
 * watcher serves every read of the attempt: a listener per read (or a race
 * per read against one shared promise) costs time or memory on each event of
 * a long stream.
 *
 * @module
 */
import type { AttemptAbort } from "./attempt_abort.ts";

/** Reads an async iterator; each read rejects with the abort's reason once it aborts. */
export class BoundedReads<T> {
  readonly #iterator: AsyncIterator<T>;
  readonly #abort: AttemptAbort;
  #rejectPending: ((reason: unknown) => void) | undefined;

  /**
   * @param iterator the stream (host code)
   * @param abort aborted by timeouts, cancel and shutdown; never reset
   */
  constructor(iterator: AsyncIterator<T>, abort: AttemptAbort) {
    this.#iterator = iterator;
    this.#abort = abort;
    abort.onAbort((reason) => this.#rejectPending?.(reason));
  }

  /**
   * The next result, or the abort's reason as soon as it aborts.
   *
   * @returns what the iterator answered
   */
  next(): Promise<IteratorResult<T>> {
    if (this.#abort.aborted) return Promise.reject(this.#abort.reason);
    return new Promise<IteratorResult<T>>((resolve, reject) => {
      this.#rejectPending = reject;
      this.#iterator.next().then(resolve, reject);
    });
  }
}
