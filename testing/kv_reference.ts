/**
 * Pieces the KvStore conformance cases share: the harness that gives each
 * case a fresh store, and a tuple comparator written straight from the SPI's
 * ordering rules, independent of the byte codec it is used to check.
 *
 * @module
 */

import type { KvKey, KvKeyPart, KvStore } from "../src/spi/kv_store.ts";

/** Options of {@link kvConformance}. */
export interface KvConformanceOptions {
  /**
   * For persistent adapters: given a store that the suite has just closed,
   * open a new store over the same data. Enables the durability cases.
   */
  reopen?: ((closed: KvStore) => Promise<KvStore> | KvStore) | undefined;
  /** Size of the large-value case in bytes (default 5 MiB; the contract asks for at least 4 MiB). */
  largeValueBytes?: number | undefined;
  /** Random command sequences the model-based case runs (default 25). */
  modelRuns?: number | undefined;
  /** Per-case timeout in milliseconds (default 60 000). */
  timeoutMs?: number | undefined;
}

/** What each group of cases receives from {@link kvConformance}. */
export interface KvHarness {
  /** Opens a fresh store, runs `body`, and always closes the store afterwards. */
  withStore(body: (store: KvStore) => Promise<void>): Promise<void>;
  /** The factory itself, for cases that need several stores. */
  open(): Promise<KvStore>;
  /** The caller's options with defaults applied. */
  options: Required<Omit<KvConformanceOptions, "reopen">> & Pick<KvConformanceOptions, "reopen">;
}

function rank(part: KvKeyPart): number {
  if (part instanceof Uint8Array) return 0;
  switch (typeof part) {
    case "string":
      return 1;
    case "number":
      return 2;
    case "bigint":
      return 3;
    default:
      return 4;
  }
}

function compareSequences(a: ArrayLike<number>, b: ArrayLike<number>): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) if (a[i] !== b[i]) return a[i] < b[i] ? -1 : 1;
  return a.length - b.length;
}

function codePoints(text: string): number[] {
  return Array.from(text, (char) => char.codePointAt(0) as number);
}

/**
 * Compares two key parts by the SPI's rules: type first, then bytes
 * lexicographically, strings by code point (same as UTF-8 bytes), numbers
 * and bigints numerically, false before true.
 *
 * @param a a key part
 * @param b a key part
 * @returns negative, zero or positive
 */
export function comparePart(a: KvKeyPart, b: KvKeyPart): number {
  const byRank = rank(a) - rank(b);
  if (byRank !== 0) return byRank;
  if (a instanceof Uint8Array && b instanceof Uint8Array) return compareSequences(a, b);
  if (typeof a === "string" && typeof b === "string") {
    return compareSequences(codePoints(a), codePoints(b));
  }
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Compares two key tuples: part by part, and a tuple before any longer tuple it prefixes.
 *
 * @param a a key
 * @param b a key
 * @returns negative, zero or positive
 */
export function compareKey(a: KvKey, b: KvKey): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const byPart = comparePart(a[i], b[i]);
    if (byPart !== 0) return byPart;
  }
  return a.length - b.length;
}

/**
 * Renders a key for assertion messages (bigint and bytes survive, unlike JSON).
 *
 * @param key a key
 * @returns a readable string
 */
export function showKey(key: KvKey): string {
  const show = (part: KvKeyPart): string => {
    if (part instanceof Uint8Array) return `bytes(${Array.from(part).join(",")})`;
    if (typeof part === "bigint") return `${part}n`;
    if (typeof part === "number") return Object.is(part, -0) ? "-0" : String(part);
    return JSON.stringify(part);
  };
  return `[${key.map(show).join(", ")}]`;
}

/**
 * The keys of a listing, rendered with {@link showKey}, for compact equality assertions.
 *
 * @param entries listed entries
 * @returns rendered keys in listing order
 */
export function keysOf(entries: readonly ({ key: KvKey } | null)[]): string[] {
  return entries.map((entry) => (entry === null ? "null" : showKey(entry.key)));
}

/**
 * A one-byte-per-char value, handy for small test payloads.
 *
 * @param text ASCII text
 * @returns its bytes
 */
export function bytes(text: string): Uint8Array {
  return new TextEncoder().encode(text);
}
