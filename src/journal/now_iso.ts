/**
 * The current time as ISO 8601 text, the form every stored timestamp takes.
 * Formatting a date costs far more than reading the clock, and a step stamps
 * several entries and records within the same millisecond.
 *
 * @module
 */

let lastMs = Number.NaN;
let lastText = "";

/**
 * `new Date().toISOString()`, formatted once per millisecond.
 *
 * @returns the current time, e.g. `2026-12-01T23:10:00.000Z`
 */
export function nowIso(): string {
  const ms = Date.now();
  if (ms !== lastMs) {
    lastText = new Date(ms).toISOString();
    lastMs = ms;
  }
  return lastText;
}
