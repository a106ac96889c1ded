/**
 * Iteration that stops the moment a signal aborts, even when the underlying
 * stream ignores the signal.
 *
 * @module
 */

/**
 * Yields the items of `source` until it ends or `signal` aborts; on abort it
 * throws `signal.reason` at once. Both SDKs end their streams quietly on abort
 * and a hung body may never settle, so the race lives here, not in the SDK.
 *
 * @param source any async iterable
 * @param signal the caller's signal
 * @returns the items of `source`
 * @throws the abort reason when `signal` aborts
 */
export async function* abortable<T>(
  source: AsyncIterable<T>,
  signal: AbortSignal,
): AsyncGenerator<T, void, undefined> {
  if (signal.aborted) throw signal.reason;
  const iterator = source[Symbol.asyncIterator]();
  let onAbort = (): void => {};
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason);
  });
  aborted.catch(() => {});
  signal.addEventListener("abort", onAbort, { once: true });
  let finished = false;
  try {
    while (true) {
      const result = await Promise.race([iterator.next(), aborted]);
      if (result.done) {
        finished = true;
        return;
      }
      yield result.value;
    }
  } finally {
    signal.removeEventListener("abort", onAbort);
    if (!finished) {
      // Not awaited: a body that ignores cancellation must not hold the caller.
      Promise.resolve(iterator.return?.()).catch(() => {});
    }
  }
}
