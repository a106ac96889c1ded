/**
 * The abort switch of one provider attempt. The engine's own watchers (the
 * attempt's timeouts, a stop or steer, the read in flight) are told through a
 * plain callback; the gateway's `AbortSignal` is made only when the gateway
 * reads `options.signal`, already aborted if the attempt was. A gateway that
 * never looks at its signal costs no controller per attempt.
 *
 * @module
 */

/** Where the gateway's options object keeps its attempt (not enumerable). */
const OWNER = Symbol("floret.attempt");

/** The `signal` getter of every attempt's options: the owning attempt's signal. */
function optionsSignal(this: { [OWNER]: AttemptAbort }): AbortSignal {
  return this[OWNER].signal;
}

/** The descriptor of every options object's `signal`, as an object literal's getter would be. */
const SIGNAL: PropertyDescriptor = { get: optionsSignal, enumerable: true, configurable: true };

/** Aborts one attempt, at most once. */
export class AttemptAbort {
  /** What the gateway's `stream()` receives. */
  readonly options: { readonly signal: AbortSignal };
  #controller: AbortController | undefined;
  #aborted = false;
  #reason: unknown;
  #listener: ((reason: unknown) => void) | undefined;

  constructor() {
    // An own, enumerable getter, so `{ signal }` reads like a plain field (and
    // spreads) but builds lazily; one getter function for every attempt.
    const options = {} as { readonly signal: AbortSignal };
    Object.defineProperty(options, OWNER, { value: this });
    Object.defineProperty(options, "signal", SIGNAL);
    this.options = options;
  }

  /** The attempt's signal (made on first read). */
  get signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.#aborted) this.#controller.abort(this.#reason);
    }
    return this.#controller.signal;
  }

  /** Whether the attempt was aborted. */
  get aborted(): boolean {
    return this.#aborted;
  }

  /** Why the attempt was aborted (`undefined` while it was not). */
  get reason(): unknown {
    return this.#reason;
  }

  /** The engine's one watcher, told once when the attempt aborts. */
  onAbort(listener: (reason: unknown) => void): void {
    this.#listener = listener;
  }

  /** Aborts the attempt: the gateway's signal (if made) first, then the engine's watcher. */
  abort(reason: unknown): void {
    if (this.#aborted) return;
    this.#aborted = true;
    this.#reason = reason;
    this.#controller?.abort(reason);
    const listener = this.#listener;
    this.#listener = undefined;
    listener?.(reason);
  }
}
