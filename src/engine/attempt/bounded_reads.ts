/**
 * Reading a gateway's stream with every read bounded by the attempt's abort
 * switch. A gateway may never answer `next()` and may ignore its signal; the
 * read must still end when the engine's timers or a cancel abort it. One
 * promise serves the whole stream and the abort rejects it: a promise (or a
 * listener, or a race against one shared promise) per read costs time or
 * memory on each event of a long stream.
 *
 * @module
 */
import type { AttemptAbort } from "./attempt_abort.ts";

/**
 * The longest the engine reads a stream without giving the event loop a
 * turn: a gateway that yields without ever awaiting I/O would otherwise
 * starve every timer (timeouts, cancel) and every other thread of the process.
 */
export const STREAM_SLICE_MS = 50;

/** Takes each read of a stream; returns `true` when it wants no more. */
export interface ReadSink<T> {
  take(result: IteratorResult<T>): boolean;
}

/** Reads an async iterator until its sink has enough, or until the abort. */
export class BoundedReads<T> {
  readonly #iterator: AsyncIterator<T>;
  readonly #abort: AttemptAbort;
  #sink: ReadSink<T> | undefined;
  #resolve: (() => void) | undefined;
  #reject: ((reason: unknown) => void) | undefined;
  // Made once per stream, and handed to every read's `then`.
  readonly #fulfilled: (result: IteratorResult<T>) => void;
  readonly #rejected: (error: unknown) => void;
  readonly #resume: () => void;
  // When the current slice of reading began (see STREAM_SLICE_MS).
  #sliceStart = 0;

  /**
   * @param iterator the stream (host code)
   * @param abort aborted by timeouts, cancel and shutdown; never reset
   */
  constructor(iterator: AsyncIterator<T>, abort: AttemptAbort) {
    this.#iterator = iterator;
    this.#abort = abort;
    this.#fulfilled = (result) => this.#took(result);
    this.#rejected = (error) => this.#settle(error, true);
    this.#resume = () => {
      this.#sliceStart = Date.now();
      if (this.#sink !== undefined && !this.#abort.aborted) this.#read();
    };
    abort.onAbort((reason) => this.#settle(reason, true));
  }

  /**
   * Reads until `sink.take` returns `true`; whatever the iterator, the sink
   * or the abort throws rejects it. A result that arrives after the abort is
   * never taken.
   *
   * @param sink takes each result in order (the first that says "enough" ends the reading)
   * @returns settles once the sink has had enough
   */
  drain(sink: ReadSink<T>): Promise<void> {
    if (this.#abort.aborted) return Promise.reject(this.#abort.reason);
    return new Promise<void>((resolve, reject) => {
      this.#sink = sink;
      this.#resolve = resolve;
      this.#reject = reject;
      this.#sliceStart = Date.now();
      this.#read();
    });
  }

  #read(): void {
    let pending: Promise<IteratorResult<T>>;
    try {
      pending = this.#iterator.next();
      // A native promise answers each `then` once, later; anything else (a
      // thenable, a value that is none) goes through one promise of ours.
      if (Object.getPrototypeOf(pending) !== Promise.prototype) {
        const raw = pending;
        pending = new Promise((resolve, reject) => raw.then(resolve, reject));
      }
    } catch (error) {
      return this.#settle(error, true);
    }
    pending.then(this.#fulfilled, this.#rejected);
  }

  #took(result: IteratorResult<T>): void {
    if (this.#sink === undefined || this.#abort.aborted) return;
    let enough: boolean;
    try {
      enough = this.#sink.take(result);
    } catch (error) {
      return this.#settle(error, true);
    }
    if (enough) this.#settle(undefined, false);
    // A stream that answers in microtasks only would hold the event loop:
    // past a slice, the next read waits for a macrotask, so timers run.
    else if (Date.now() - this.#sliceStart >= STREAM_SLICE_MS) setTimeout(this.#resume, 0);
    else this.#read();
  }

  /** Ends the reading once: resolved, or rejected with `reason`. */
  #settle(reason: unknown, failed: boolean): void {
    const resolve = this.#resolve;
    const reject = this.#reject;
    if (this.#sink === undefined) return;
    this.#sink = this.#resolve = this.#reject = undefined;
    if (failed) reject!(reason);
    else resolve!();
  }
}
