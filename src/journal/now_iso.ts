/**
 * The current time as ISO 8601 text, the form every stored timestamp takes.
 * Formatting a date costs far more than reading the clock, and a step stamps
 * several entries and records within the same millisecond.
 *
 * @module
 */

let lastMs = Number.NaN;
/** The host's clock (`openHost({ clock })`), when one is installed. */
let clock: { now(): number } | undefined;

/**
 * Makes {@link nowIso} read `source` (for reproducible timestamps), or the
 * system clock again with `undefined`. Timers and leases keep real time.
 *
 * @param source answers the current time in ms since the epoch
 */
export function useClock(source: { now(): number } | undefined): void {
  clock = source;
  lastMs = Number.NaN;
}
let lastText = "";

/**
 * `new Date().toISOString()`, formatted once per millisecond.
 *
 * @returns the current time, e.g. `2026-12-01T23:10:00.000Z`
 */
export function nowIso(): string {
  let ms = clock === undefined ? Date.now() : clock.now();
  if (!Number.isFinite(ms)) ms = Date.now(); // a broken test clock never breaks a commit
  if (ms !== lastMs) {
    lastText = new Date(ms).toISOString();
    lastMs = ms;
  }
  return lastText;
}
