/**
 * Engine-allocated ids: a prefix, a time part that sorts by creation, and a
 * random part from Web Crypto.
 *
 * @module
 */

const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"; // Crockford base32, sorts like its values
let lastTime = 0;
// The time part of lastTime, encoded once per millisecond: ids made within one share it.
let timePart = encodeBase32(lastTime, 10);
let sequence = 0;
// Random bytes are drawn 64 ids at a time: one getRandomValues call per id
// was a visible share of a tool step's cost. Each byte is used once.
const pool = new Uint8Array(512);
let poolAt = pool.length;

/**
 * Allocates a new id such as `thread_01jd…`. Ids made by one process sort in
 * creation order, even within one millisecond.
 *
 * @param prefix the kind of thing, e.g. `thread`, `turn`, `run`
 * @returns the id
 */
export function newId(prefix: string): string {
  if (idSource !== undefined) return idSource();
  const now = Date.now();
  if (now > lastTime) {
    lastTime = now;
    timePart = encodeBase32(now, 10);
    sequence = 0;
  } else {
    sequence++;
  }
  if (poolAt + 8 > pool.length) {
    crypto.getRandomValues(pool);
    poolAt = 0;
  }
  let tail = "";
  for (let i = poolAt; i < poolAt + 8; i++) tail += ALPHABET[pool[i] & 31];
  poolAt += 8;
  return `${prefix}_${timePart}${encodeBase32(sequence, 3)}${tail}`;
}

/** The host's id source (`openHost({ ids })`), when one is installed. */
let idSource: (() => string) | undefined;

/**
 * Makes {@link newId} answer from `source` (for reproducible tests), or
 * again from the clock and Web Crypto with `undefined`. Every id the engine
 * allocates in this process comes from the source while it is installed.
 *
 * @param source answers a new, unique id (no `:`) on each call
 */
export function useIdSource(source: (() => string) | undefined): void {
  idSource = source === undefined ? undefined : () => checkedId(source());
}

/** An id from host code: a non-empty string without `:` (item ids are built with it). */
function checkedId(id: unknown): string {
  if (typeof id !== "string" || id === "" || id.length > 200 || id.includes(":")) {
    throw new TypeError(
      `openHost ids() must return a non-empty string of at most 200 characters without ":": ${
        String(id).slice(0, 80)
      }`,
    );
  }
  return id;
}

function encodeBase32(value: number, width: number): string {
  let out = "";
  let rest = value;
  for (let i = 0; i < width; i++) {
    out = ALPHABET[rest % 32] + out;
    rest = Math.floor(rest / 32);
  }
  return out;
}

/**
 * The creation time (ms since the epoch) encoded in an id made by
 * {@link newId}, or `undefined` when the text is not such an id.
 *
 * @param id an engine-allocated id such as `turn_01jd…`
 * @returns milliseconds since the epoch
 */
export function idTime(id: string): number | undefined {
  const match = /^[a-z]+_([0-9a-hjkmnp-tv-z]{10})[0-9a-hjkmnp-tv-z]{11}$/.exec(id);
  if (!match) return undefined;
  let value = 0;
  for (const char of match[1]) value = value * 32 + ALPHABET.indexOf(char);
  return value;
}
