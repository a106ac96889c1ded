/**
 * Bounds a promise by an abort signal, so host code that ignores the signal
 * (a resolver, a transport, a tool handler, a gateway's stream) still cannot
 * hold the engine past its own time limits.
 *
 * @module
 */
import { unwatchAbort, watchAbort } from "./abort_watch.ts";

/**
 * Settles like `promise`, or rejects with the signal's reason as soon as the
 * signal aborts, whichever comes first.
 *
 * @param promise the work
 * @param signal the bound
 * @returns the work's value
 */
export function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    promise.catch(() => {});
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
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
  if (signal.aborted) {
    promise.catch(() => {});
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    watchAbort(signal, onAbort);
    promise.then(
      (value) => {
        unwatchAbort(signal, onAbort);
        resolve(value);
      },
      (error) => {
        unwatchAbort(signal, onAbort);
        reject(error);
      },
    );
  });
}
