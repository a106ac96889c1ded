/**
 * Cheap abort watching for the engine's own signals (a run's step and tool
 * signals, made by its own `AbortController`s). Adding and removing an
 * `EventTarget` listener costs far more than the work it guards, and a step
 * does both several times; here each signal gets one real listener, on first
 * use, that calls the callbacks watching it then.
 *
 * The real listener stays until the signal aborts, which keeps nothing alive
 * for a plain controller's signal. Do not use this for `AbortSignal.timeout()`
 * or `AbortSignal.any()` signals: runtimes hold those strongly while they have
 * listeners.
 *
 * @module
 */

const watchers = new WeakMap<AbortSignal, Set<() => void>>();

/**
 * Calls `onAbort` once when `signal` aborts, unless {@link unwatchAbort} came
 * first. Like `addEventListener`, the same callback twice is one watcher.
 * `signal` must not be aborted yet (the caller checks).
 *
 * @param signal a signal of the engine's own controller
 * @param onAbort told once, synchronously, while the signal aborts
 */
export function watchAbort(signal: AbortSignal, onAbort: () => void): void {
  let watching = watchers.get(signal);
  if (!watching) {
    const callbacks = new Set<() => void>();
    watching = callbacks;
    watchers.set(signal, callbacks);
    signal.addEventListener("abort", () => {
      watchers.delete(signal);
      let failure: { error: unknown } | undefined;
      for (const callback of [...callbacks]) {
        try {
          callback();
        } catch (error) {
          failure ??= { error };
        }
      }
      // Every watcher was told; the first failure surfaces as a listener's would.
      if (failure) throw failure.error;
    }, { once: true });
  }
  watching.add(onAbort);
}

/**
 * Stops `onAbort` watching `signal` (nothing when it does not).
 *
 * @param signal the watched signal
 * @param onAbort the callback given to {@link watchAbort}
 */
export function unwatchAbort(signal: AbortSignal, onAbort: () => void): void {
  watchers.get(signal)?.delete(onAbort);
}
