/**
 * Bounds a promise by an abort signal, so host code that ignores the signal
 * (a resolver, a transport, a tool handler, a gateway's stream) still cannot
 * hold the engine past its own time limits.
 *
 * @module
 */
import { unwatchAbort, watchAbort } from "./abort_watch.ts";

/** How a bound listens to its signal: start and stop calling `onAbort` on abort. */
interface AbortListening {
  listen(signal: AbortSignal, onAbort: () => void): void;
  stop(signal: AbortSignal, onAbort: () => void): void;
}

/** A listener on the signal itself, for signals that are not the engine's. */
const ON_THE_SIGNAL: AbortListening = {
  listen: (signal, onAbort) => signal.addEventListener("abort", onAbort, { once: true }),
  stop: (signal, onAbort) => signal.removeEventListener("abort", onAbort),
};

/** The engine's shared watcher (one listener per signal, see `watchAbort`). */
const BY_THE_WATCHER: AbortListening = { listen: watchAbort, stop: unwatchAbort };

/**
 * Settles like `promise`, or rejects with the signal's reason as soon as the
 * signal aborts, whichever comes first.
 *
 * @param promise the work
 * @param signal the bound
 * @returns the work's value
 */
export function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return bound(promise, signal, ON_THE_SIGNAL);
}

/**
 * {@link untilAborted} for a signal of the engine's own controller (a run's
 * tool signal), watched through {@link watchAbort}: no `EventTarget` listener
 * is added and removed per call.
 *
 * @param promise the work
 * @param signal the bound, made by the engine's own `AbortController`
 * @returns the work's value
 */
export function untilRunAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return bound(promise, signal, BY_THE_WATCHER);
}

function bound<T>(promise: Promise<T>, signal: AbortSignal, how: AbortListening): Promise<T> {
  if (signal.aborted) {
    promise.catch(() => {});
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = rejecter(reject, signal);
    how.listen(signal, onAbort);
    promise.then(
      (value) => {
        how.stop(signal, onAbort);
        resolve(value);
      },
      (error) => {
        how.stop(signal, onAbort);
        reject(error);
      },
    );
  });
}

/**
 * The abort callback of one bound. Made by a function, not assigned inline:
 * a named closure per call costs a `name` definition under some transpilers
 * (esbuild's keepNames), and a run bounds its tool batch on every step.
 */
function rejecter(reject: (reason: unknown) => void, signal: AbortSignal): () => void {
  return () => reject(signal.reason);
}
