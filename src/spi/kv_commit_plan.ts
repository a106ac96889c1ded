/**
 * Validation and encoding shared by every adapter before it touches storage:
 * a commit is checked whole (so a bad key never leaves a half-applied
 * write), its keys are encoded once, and its values are copied so the caller
 * may reuse its buffers. Also the version format every adapter emits.
 *
 * @module
 */

import { FloretError } from "../errors.ts";
import { encodeKey } from "./key_codec.ts";
import type { KvCommit, KvKey } from "./kv_store.ts";

/**
 * One check of a planned commit: the stored version of `key` must equal
 * `version` exactly (string equality), or the key must be absent when
 * `version` is null. Evaluate it inside the same atomic step as the writes.
 */
export interface PlannedCheck {
  /** Encoded key. */
  key: Uint8Array;
  /** Expected version, or null for "must not exist". */
  version: string | null;
}

/** One write of a planned commit: `value: null` deletes. */
export interface PlannedWrite {
  /** Encoded key. */
  key: Uint8Array;
  /** A private copy of the value, or null to delete. */
  value: Uint8Array | null;
}

/** A validated commit with encoded keys and private copies of every value. */
export interface CommitPlan {
  /** Checks, in the caller's order. */
  checks: PlannedCheck[];
  /** Sets first, then deletes; every key appears at most once. */
  writes: PlannedWrite[];
}

/** Width of a version string: enough digits for any 64-bit counter. */
export const VERSION_WIDTH = 20;

function invalid(detail: string): FloretError {
  return new FloretError("invalid_input", `Invalid commit: ${detail}`);
}

function listOf<T>(value: T[] | undefined, name: string): T[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw invalid(`${name} must be an array`);
  return value;
}

// Binary strings of the encoded bytes make Map keys that compare by content.
// fromCharCode over a chunk builds the string in one call instead of one
// concatenation per byte; chunks stay far below any argument-count limit.
const MAP_KEY_CHUNK = 4096;

function mapKey(bytes: Uint8Array): string {
  if (bytes.length <= MAP_KEY_CHUNK) {
    return String.fromCharCode.apply(null, bytes as unknown as number[]);
  }
  let out = "";
  for (let i = 0; i < bytes.length; i += MAP_KEY_CHUNK) {
    const chunk = bytes.subarray(i, i + MAP_KEY_CHUNK);
    out += String.fromCharCode.apply(null, chunk as unknown as number[]);
  }
  return out;
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

// A commit writes a handful of keys: comparing them pairwise is cheaper than
// a Set of their binary strings, which large commits still get.
const PAIRWISE_LIMIT = 16;

function assertDistinct(writes: readonly { key: Uint8Array }[]): void {
  if (writes.length < 2) return;
  if (writes.length <= PAIRWISE_LIMIT) {
    // Each key read once: a planner may make a write's key bytes only when read.
    const keys = writes.map((write) => write.key);
    for (let i = 1; i < keys.length; i++) {
      for (let j = 0; j < i; j++) {
        if (sameBytes(keys[i], keys[j])) {
          throw invalid("a key is written more than once");
        }
      }
    }
    return;
  }
  const seen = new Set<string>();
  for (const write of writes) {
    const id = mapKey(write.key);
    if (seen.has(id)) throw invalid("a key is written more than once");
    seen.add(id);
  }
}

/**
 * Validates a commit and encodes it for an adapter.
 *
 * @param op the caller's commit
 * @returns encoded checks and writes with copied values
 * @throws {FloretError} `invalid_input` for bad keys, non-byte values, bad versions, or a key
 *   written twice in one commit (set twice, or both set and deleted)
 * @example
 * ```ts
 * import { planCommit } from "@floret/engine/spi";
 * const plan = planCommit({ set: [{ key: ["a"], value: new Uint8Array([1]) }] });
 * ```
 */
export function planCommit(op: KvCommit): CommitPlan {
  return plan(op, true);
}

/**
 * Like {@link planCommit}, but the plan takes the caller's value buffers
 * instead of copies. Internal (not in the SPI): only for a caller that never
 * touches those buffers again, i.e. the journal, whose values are freshly
 * encoded for this one commit.
 *
 * @param op a commit whose value buffers the caller hands over
 * @returns encoded checks and writes sharing the caller's values
 * @throws {FloretError} `invalid_input` exactly as {@link planCommit} does
 */
export function planOwnedCommit(op: KvCommit): CommitPlan {
  return plan(op, false);
}

function plan(op: KvCommit, copyValues: boolean): CommitPlan {
  if (op === null || typeof op !== "object") throw invalid("the operation must be an object");
  const checks = listOf(op.checks, "checks").map((check): PlannedCheck => {
    if (check === null || typeof check !== "object") throw invalid("a check must be an object");
    if (check.version !== null && typeof check.version !== "string") {
      throw invalid("a check's version must be a string or null");
    }
    return { key: encodeKey(check.key), version: check.version };
  });
  const writes: PlannedWrite[] = listOf(op.set, "set").map((entry) => {
    if (entry === null || typeof entry !== "object") throw invalid("a set entry must be an object");
    if (!(entry.value instanceof Uint8Array)) throw invalid("a value must be a Uint8Array");
    return { key: encodeKey(entry.key), value: copyValues ? entry.value.slice() : entry.value };
  });
  for (const key of listOf(op.delete, "delete")) {
    writes.push({ key: encodeKey(key), value: null });
  }
  assertDistinct(writes);
  return { checks, writes };
}

/**
 * Checks a plan its caller built itself (keys encoded with `encodeKey`, values
 * its own fresh buffers, sets before deletes): every key is written at most
 * once, as {@link planCommit} requires. Internal (not in the SPI): the
 * journal's thread commits, which skip the tuple form on the planned path.
 *
 * @param plan the caller's plan
 * @returns the same plan
 * @throws {FloretError} `invalid_input` when a key is written twice, as {@link planCommit} does
 */
export function checkedOwnPlan<
  P extends { writes: readonly { key: Uint8Array; id?: string }[] },
>(plan: P): P {
  const writes = plan.writes;
  if (writes.length < 2) return plan;
  // When every write carries its key's map id (the journal's plans do), the ids
  // are compared: one string comparison each, and no key bytes made to compare.
  let ids = true;
  for (let i = 0; i < writes.length; i++) {
    if (typeof writes[i].id !== "string") {
      ids = false;
      break;
    }
  }
  if (!ids) assertDistinct(writes);
  else if (writes.length <= PAIRWISE_LIMIT) {
    for (let i = 1; i < writes.length; i++) {
      const id = writes[i].id;
      for (let j = 0; j < i; j++) {
        if (writes[j].id === id) throw invalid("a key is written more than once");
      }
    }
  } else {
    const seen = new Set<string>();
    for (const write of writes) {
      if (seen.has(write.id!)) throw invalid("a key is written more than once");
      seen.add(write.id!);
    }
  }
  return plan;
}

/**
 * Encodes the keys of a `getMany` call.
 *
 * @param keys the keys to read
 * @returns encoded keys in the same order
 * @throws {FloretError} `invalid_input` when `keys` is not an array or a key is invalid
 */
export function planGet(keys: readonly KvKey[]): Uint8Array[] {
  if (!Array.isArray(keys)) {
    throw new FloretError("invalid_input", "Invalid read: keys must be an array");
  }
  return keys.map((key) => encodeKey(key));
}

// formatVersion's digit codes; it never yields, so one array serves every call.
const versionCodes: number[] = new Array<number>(VERSION_WIDTH).fill(0x30);

/**
 * Formats a commit counter as a version: fixed-width decimal, so later commits
 * compare greater with plain string comparison.
 *
 * @param counter a non-negative commit counter
 * @returns a {@link VERSION_WIDTH}-character string
 */
export function formatVersion(counter: bigint | number): string {
  if (typeof counter !== "number" || !Number.isSafeInteger(counter) || counter < 0) {
    return counter.toString().padStart(VERSION_WIDTH, "0");
  }
  // The digits written into one reused array and made a string in one call: a padded string
  // is a rope (the padding and the digits) that a store keeps with every key of the commit,
  // ~146 bytes in V8 where this flat string takes ~60.
  let rest = counter;
  for (let i = VERSION_WIDTH - 1; i >= 0; i--) {
    versionCodes[i] = 0x30 + (rest % 10);
    rest = Math.floor(rest / 10);
  }
  return String.fromCharCode.apply(null, versionCodes);
}

/**
 * A binary string of bytes, usable as a `Map` key and ordered like memcmp
 * (each character is one byte, so string comparison is byte comparison).
 *
 * @param bytes encoded key
 * @returns a string with one char code (0–255) per byte
 */
export function bytesToMapKey(bytes: Uint8Array): string {
  return mapKey(bytes);
}
