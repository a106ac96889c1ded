/**
 * Bounds a promise by an abort signal, so host code that ignores the signal
 * (a resolver, a transport, a tool handler, a gateway's stream) still cannot
 * hold the engine past its own time limits.
 *
 * @module
 */

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
