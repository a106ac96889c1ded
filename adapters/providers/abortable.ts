/**
 * Iteration that stops the moment a signal aborts, even when the underlying
 * stream ignores the signal.
 *
 * @module
 */
import type { ProviderEvent } from "@floret/engine";

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

/** A parser of one SDK's stream events into provider events (anthropic_events.ts, openai_responses_events.ts). */
export interface EventParser {
  /** Whether the terminal event was seen: anything after it belongs to no response of ours. */
  readonly done: boolean;
  /** The provider events one SDK event makes. */
  push(event: unknown): ProviderEvent[];
  /** Checks the stream ended complete; throws when it was cut short. */
  end(): void;
}

/**
 * The provider events of an SDK stream: its events read until the terminal
 * one (or the stream's end), each parsed, abortable at every read.
 *
 * @param stream the SDK's stream, once its request was answered
 * @param parser turns each SDK event into provider events
 * @param signal the caller's signal
 * @returns the provider events, in order
 * @throws the abort reason when `signal` aborts, or the parser's error for a stream cut short
 */
export async function* parsedEvents(
  stream: AsyncIterable<unknown>,
  parser: EventParser,
  signal: AbortSignal,
): AsyncGenerator<ProviderEvent, void, undefined> {
  for await (const event of abortable(stream, signal)) {
    yield* parser.push(event);
    if (parser.done) break;
  }
  if (signal.aborted) throw signal.reason;
  parser.end();
}
