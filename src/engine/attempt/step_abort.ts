/**
 * What stops a provider request from outside: a run's step switch (a stop or
 * a steer), or a plain `AbortSignal` (a title's limit, a compaction's run).
 * The run's step only needs a flag, a reason and a few engine watchers, so it
 * is a plain object: a run pays no `AbortController` and no `EventTarget`
 * listener for it (the gateway's signal is the attempt's own, made when the
 * gateway reads it).
 *
 * @module
 */
import { unwatchAbort, watchAbort } from "../../tools/abort_watch.ts";

/** Stops a provider request; the engine's watchers are told once, synchronously, when it does. */
export interface StopSwitch {
  /** Whether it stopped. */
  readonly aborted: boolean;
  /** Why it stopped (`undefined` while it did not). */
  readonly reason: unknown;
  /**
   * Calls `onAbort` once when it stops, unless {@link unwatch} came first.
   * It must not have stopped yet (the caller checks).
   */
  watch(onAbort: () => void): void;
  /** Stops `onAbort` watching (nothing when it does not). */
  unwatch(onAbort: () => void): void;
}

/** The stop switch of a run's provider requests, aborted by a stop or a steer. */
export class StepAbort implements StopSwitch {
  #aborted = false;
  #reason: unknown;
  // Usually one watcher (the attempt in flight), or none.
  #watchers: (() => void)[] = [];

  /** Whether it stopped. */
  get aborted(): boolean {
    return this.#aborted;
  }

  /** Why it stopped (`undefined` while it did not). */
  get reason(): unknown {
    return this.#reason;
  }

  /** {@inheritDoc StopSwitch.watch} Like `addEventListener`, the same callback twice is one watcher. */
  watch(onAbort: () => void): void {
    if (!this.#watchers.includes(onAbort)) this.#watchers.push(onAbort);
  }

  /** {@inheritDoc StopSwitch.unwatch} */
  unwatch(onAbort: () => void): void {
    const at = this.#watchers.indexOf(onAbort);
    if (at >= 0) this.#watchers.splice(at, 1);
  }

  /**
   * Stops, at most once, telling every watcher. The watchers are the
   * engine's own (the attempt in flight, a retry's wait), which only flag and
   * settle, as `AttemptAbort`'s listener does.
   */
  abort(reason: unknown): void {
    if (this.#aborted) return;
    this.#aborted = true;
    this.#reason = reason;
    const watchers = this.#watchers;
    this.#watchers = [];
    for (const watcher of watchers) watcher();
  }
}

/**
 * A plain signal as a {@link StopSwitch}, watched through `watchAbort` (so it
 * must be a signal of the engine's own controller, not `AbortSignal.timeout()`
 * or `AbortSignal.any()`).
 */
export function signalSwitch(signal: AbortSignal): StopSwitch {
  return {
    get aborted(): boolean {
      return signal.aborted;
    },
    get reason(): unknown {
      return signal.reason;
    },
    watch: (onAbort) => watchAbort(signal, onAbort),
    unwatch: (onAbort) => unwatchAbort(signal, onAbort),
  };
}
