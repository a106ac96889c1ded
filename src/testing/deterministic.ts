/**
 * Reproducible ids and times for host tests: `openHost({ ids:
 * sequentialIds("t"), clock: manualClock("2026-01-01T00:00:00.000Z") })`
 * makes every id and every stored timestamp the same on every run.
 *
 * @module
 */

/**
 * Ids `<prefix>-000001`, `<prefix>-000002`, … (zero-padded, so they sort in
 * the order they were made, like the engine's own ids).
 *
 * @param prefix what each id starts with (default `id`); no `:`
 * @returns a function answering the next id on each call
 * @example
 * ```ts
 * import { sequentialIds } from "@floret/engine/testing";
 * const ids = sequentialIds("t");
 * console.log(ids(), ids()); // "t-000001 t-000002"
 * ```
 */
export function sequentialIds(prefix = "id"): () => string {
  if (typeof prefix !== "string" || prefix.includes(":")) {
    throw new TypeError('sequentialIds prefix must be a string without ":"');
  }
  let next = 0;
  return () => `${prefix}-${String(++next).padStart(6, "0")}`;
}

/** A clock that moves only when told. */
export interface ManualClock {
  /** The current time, ms since the epoch. */
  now(): number;
  /** Moves the clock on by `ms` (not backwards). */
  advance(ms: number): void;
}

/**
 * A clock that stands still at `startIso` until `advance` moves it. Stored
 * timestamps (`createdAt`, `startedAt`, entry times) read it; timers, leases
 * and provider timeouts keep real time, so a test never hangs on it.
 *
 * @param startIso the starting time, ISO 8601
 * @returns the clock
 * @example
 * ```ts
 * import { manualClock } from "@floret/engine/testing";
 * const clock = manualClock("2026-01-01T00:00:00.000Z");
 * clock.advance(1_000);
 * console.log(new Date(clock.now()).toISOString()); // "2026-01-01T00:00:01.000Z"
 * ```
 */
export function manualClock(startIso: string): ManualClock {
  let now = Date.parse(startIso);
  if (!Number.isFinite(now)) throw new TypeError(`manualClock needs an ISO time: ${startIso}`);
  return {
    now: () => now,
    advance(ms: number): void {
      if (!Number.isFinite(ms) || ms < 0) {
        throw new TypeError(`manualClock advance needs a non-negative number: ${ms}`);
      }
      now += ms;
    },
  };
}
