/**
 * Turns a {@link KvSelector} and {@link KvListOptions} into a byte range, so
 * every adapter pages the same way: each one only has to scan
 * `lower <= key < upper` in the requested direction and stop at `limit`.
 *
 * @module
 */

import { FloretError } from "../errors.ts";
import { encodeKey } from "./key_codec.ts";
import type { KvListOptions, KvSelector } from "./kv_store.ts";

/** A validated listing: scan encoded keys in `[lower, upper)`. */
export interface KvScan {
  /** Inclusive lower bound on encoded keys. */
  lower: Uint8Array;
  /** Exclusive upper bound on encoded keys. */
  upper: Uint8Array;
  /** Scan from `upper` down instead of from `lower` up. */
  reverse: boolean;
  /** At most this many entries; `Infinity` when unlimited. */
  limit: number;
  /** True when the range holds nothing (including `limit: 0`); adapters may skip I/O. */
  empty: boolean;
}

// Every encoded part starts with a type tag in 0x01..0x31, so after a
// complete key no continuation byte is 0x00 or 0xFF: appending 0x00 gives
// the smallest key above it, appending 0xFF a bound above all its extensions.
function append(bytes: Uint8Array, byte: number): Uint8Array {
  const out = new Uint8Array(bytes.length + 1);
  out.set(bytes);
  out[bytes.length] = byte;
  return out;
}

function invalid(detail: string): FloretError {
  return new FloretError("invalid_input", `Invalid list request: ${detail}`);
}

function validateLimit(limit: number | undefined): number {
  if (limit === undefined) return Infinity;
  if (typeof limit !== "number" || !Number.isInteger(limit) || limit < 0) {
    throw invalid(`limit must be a non-negative integer, got ${String(limit)}`);
  }
  return limit;
}

function selectorBounds(selector: KvSelector): [Uint8Array, Uint8Array] {
  if (selector === null || typeof selector !== "object") {
    throw invalid("selector must be an object");
  }
  if ("prefix" in selector) {
    if ("start" in selector || "end" in selector) {
      throw invalid("use either prefix or start/end, not both");
    }
    const prefix = encodeKey(selector.prefix, true);
    // Keys strictly longer than the prefix: the prefix key itself is excluded.
    return [append(prefix, 0x00), append(prefix, 0xff)];
  }
  if ("start" in selector && "end" in selector) {
    return [encodeKey(selector.start, true), encodeKey(selector.end, true)];
  }
  throw invalid("selector needs prefix, or start and end");
}

/**
 * Validates a listing request and computes the byte range to scan.
 *
 * @param selector `prefix` (keys strictly longer than it) or half-open `start`/`end`
 * @param options `limit` (0 lists nothing), `reverse`, `after` (exclusive, in the scan direction)
 * @returns the range and paging parameters
 * @throws {FloretError} `invalid_input` for malformed selectors, keys or limits
 * @example
 * ```ts
 * import { planScan } from "@floret/engine/spi";
 * const scan = planScan({ prefix: ["thread"] }, { limit: 10 });
 * ```
 */
export function planScan(selector: KvSelector, options: KvListOptions = {}): KvScan {
  if (options === null || typeof options !== "object") throw invalid("options must be an object");
  const limit = validateLimit(options.limit);
  const reverse = options.reverse ?? false;
  if (typeof reverse !== "boolean") throw invalid("reverse must be a boolean");
  let [lower, upper] = selectorBounds(selector);
  if (options.after !== undefined) {
    const after = encodeKey(options.after, true);
    if (reverse) {
      if (compareBytes(after, upper) < 0) upper = after;
    } else {
      const next = append(after, 0x00);
      if (compareBytes(next, lower) > 0) lower = next;
    }
  }
  const empty = limit === 0 || compareBytes(lower, upper) >= 0;
  return { lower, upper, reverse, limit, empty };
}

/**
 * Whether an encoded key falls inside a scan's range.
 *
 * @param scan a plan from {@link planScan}
 * @param key an encoded key
 * @returns true when `lower <= key < upper`
 */
export function inScan(scan: KvScan, key: Uint8Array): boolean {
  return compareBytes(scan.lower, key) <= 0 && compareBytes(key, scan.upper) < 0;
}

/**
 * Compares two encoded keys as unsigned bytes.
 *
 * @param a encoded key
 * @param b encoded key
 * @returns negative, zero or positive, like a sort comparator
 */
export function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) if (a[i] !== b[i]) return a[i] - b[i];
  return a.length - b.length;
}
