/**
 * Reads how long a provider asked us to wait, from headers or from the
 * wording of its error message.
 *
 * @module
 */

/**
 * Reads `retry-after-ms` (milliseconds) or `retry-after` (seconds or an HTTP
 * date). The millisecond header wins because it is the more precise of the two.
 *
 * @param headers response headers, if any
 * @param now the current time in ms, for HTTP dates
 * @returns the wait in milliseconds, or undefined when none was given
 */
export function retryAfterFromHeaders(
  headers: Headers | undefined,
  now: number = Date.now(),
): number | undefined {
  if (headers === undefined) return undefined;
  const ms = headers.get("retry-after-ms");
  if (ms !== null) {
    const value = Number.parseFloat(ms);
    if (Number.isFinite(value) && value >= 0) return Math.round(value);
  }
  const after = headers.get("retry-after");
  if (after === null) return undefined;
  const trimmed = after.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number.parseFloat(trimmed) * 1000);
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

const units: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/**
 * Reads phrases like "Please try again in 174ms", "try again in 1.5s" or
 * "try again in 6m0s" from an error message; OpenAI puts its hint there when
 * the headers do not carry one.
 *
 * @param message the provider's error message
 * @returns the wait in milliseconds, or undefined
 */
export function retryAfterFromMessage(message: string | undefined): number | undefined {
  if (!message) return undefined;
  const match = /try again in ((?:\d+(?:\.\d+)?(?:ms|s|m|h))+)/i.exec(message);
  if (!match) return undefined;
  let total = 0;
  for (const part of match[1].matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/gi)) {
    total += Number.parseFloat(part[1]) * units[part[2].toLowerCase()];
  }
  return Math.round(total);
}
