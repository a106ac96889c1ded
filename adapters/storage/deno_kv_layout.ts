/**
 * How the Deno KV store lays our entries out in Deno's key space, and how a
 * commit is fitted into Deno KV's per-operation limits.
 *
 * Each entry lives under a one-part Deno key, `[encodedKey]`: Deno orders
 * byte parts by their bytes, so its order is exactly the SPI's order, and the
 * entry's Deno versionstamp is its version. The stored value is a small
 * header: either the value itself ("inline") or a reference to a blob whose
 * 64 KiB chunks live under `["floret.blob", blobId, index]` (a string first
 * part, so chunks sort after every entry and never show up in a listing).
 *
 * @module
 */

import { FloretError } from "@floret/engine/spi";
import type { CommitPlan, PlannedCheck } from "@floret/engine/spi";
import type { DenoKvKey } from "./deno_kv_handle.ts";

/**
 * Deno KV's limits. Checks use KV Connect's (and Deno Deploy's) 10, not the
 * local database's 100, so a store behaves the same on every backend.
 */
export const LIMITS = {
  /** Largest encoded Deno key that can be written. */
  keyBytes: 2048,
  /** Largest encoded Deno key that can be read (list bounds may be one byte longer). */
  readKeyBytes: 2049,
  /** Largest value. */
  valueBytes: 65536,
  /** Checks per atomic operation. */
  checks: 10,
  /** Sets and deletes per atomic operation. */
  mutations: 1000,
  /** Keys and values of one atomic operation together, with a margin below Deno's 819,200. */
  atomicBytes: 819200 - 4096,
  /** Keys of the sets of one atomic operation together. */
  atomicSetKeyBytes: 81920,
  /** Keys per `getMany`. */
  readKeys: 10,
  /** Entries per list round trip. */
  listBatch: 1000,
} as const;

/** What Deno adds per check or mutation beyond key and value, rounded up (measured: 4–8). */
const PER_ITEM_BYTES = 16;
/** Upper bound of a chunk key's encoded size: the space name, a 16-byte id (escaped), a number. */
const CHUNK_KEY_BYTES = 64;
/** Space of blob chunks. */
export const BLOB_SPACE = "floret.blob";

const INLINE = 0x00;
const CHUNKED = 0x01;
const ID_BYTES = 16;
const CHUNKED_HEADER_BYTES = 1 + ID_BYTES + 8;

/** A blob: a value too large (or moved out to fit a commit) stored in chunks. */
export interface Blob {
  /** Random id, unique per write: a blob is never reused or rewritten. */
  id: Uint8Array;
  /** Total length in bytes. */
  length: number;
}

/** A decoded header. */
export type Header = { kind: "inline"; value: Uint8Array } | { kind: "chunked"; blob: Blob };

/** One set of a laid-out commit. */
export interface LaidOutSet {
  /** The encoded SPI key. */
  key: Uint8Array;
  /** The header to store under it. */
  header: Uint8Array;
  /** When chunked: the blob and the bytes to stage before the commit. */
  blob?: Blob & { value: Uint8Array };
}

/** A commit fitted into one Deno KV atomic operation, plus the blobs to stage first. */
export interface CommitLayout {
  /** Checks, unchanged. */
  checks: PlannedCheck[];
  /** Header writes. */
  sets: LaidOutSet[];
  /** Encoded keys to delete. */
  deletes: Uint8Array[];
}

/**
 * The Deno key of an entry.
 *
 * @param encoded the SPI-encoded key
 * @returns a one-part Deno key
 */
export function entryKey(encoded: Uint8Array): DenoKvKey {
  return [encoded];
}

/**
 * The Deno key of one chunk of a blob.
 *
 * @param id the blob's id
 * @param index the chunk's position
 * @returns the chunk's Deno key
 */
export function chunkKey(id: Uint8Array, index: number): DenoKvKey {
  return [BLOB_SPACE, id, index];
}

/**
 * The size Deno gives the key `[encoded]`: a tag, the bytes with each 0x00
 * escaped to two bytes, and a terminator.
 *
 * @param encoded the SPI-encoded key
 * @returns the encoded Deno key's length
 */
export function entryKeySize(encoded: Uint8Array): number {
  let zeros = 0;
  for (const byte of encoded) if (byte === 0) zeros++;
  return encoded.length + zeros + 2;
}

/**
 * Fails clearly when a key is too long for Deno KV.
 *
 * @param encoded the SPI-encoded key
 * @param limit the write or read limit
 * @throws {FloretError} `invalid_input` when the key is too long
 */
export function assertKeyFits(encoded: Uint8Array, limit: number = LIMITS.keyBytes): void {
  const size = entryKeySize(encoded);
  if (size > limit) {
    throw new FloretError(
      "invalid_input",
      `Invalid key: ${size} bytes once encoded for Deno KV, which allows at most ${limit}`,
    );
  }
}

/**
 * Encodes an inline header.
 *
 * @param value the entry's bytes (at most 64 KiB - 1)
 * @returns the header
 */
export function inlineHeader(value: Uint8Array): Uint8Array {
  const header = new Uint8Array(value.length + 1);
  header[0] = INLINE;
  header.set(value, 1);
  return header;
}

function chunkedHeader(blob: Blob): Uint8Array {
  const header = new Uint8Array(CHUNKED_HEADER_BYTES);
  header[0] = CHUNKED;
  header.set(blob.id, 1);
  new DataView(header.buffer).setFloat64(1 + ID_BYTES, blob.length);
  return header;
}

/**
 * Decodes a stored header.
 *
 * @param value what Deno returned for an entry key
 * @returns the header
 * @throws {FloretError} `storage_failure` when the value was not written by this store
 */
export function readHeader(value: unknown): Header {
  if (value instanceof Uint8Array && value.length >= 1) {
    if (value[0] === INLINE) return { kind: "inline", value: value.slice(1) };
    if (value[0] === CHUNKED && value.length === CHUNKED_HEADER_BYTES) {
      const length = new DataView(value.buffer, value.byteOffset).getFloat64(1 + ID_BYTES);
      return { kind: "chunked", blob: { id: value.slice(1, 1 + ID_BYTES), length } };
    }
  }
  throw new FloretError("storage_failure", "Deno KV entry was not written by denoKvStore");
}

/**
 * Chunks per blob.
 *
 * @param length the blob's length
 * @returns how many chunks hold it
 */
export function chunkCount(length: number): number {
  return Math.ceil(length / LIMITS.valueBytes);
}

/**
 * Groups chunk writes (or deletes) into atomic operations that each stay within the limits.
 *
 * @param sizes the value size of each chunk, in order (0 for deletes)
 * @returns index ranges `[from, to)` of the groups
 */
export function chunkGroups(sizes: number[]): [number, number][] {
  const groups: [number, number][] = [];
  let from = 0;
  let bytes = 0;
  sizes.forEach((size, i) => {
    const cost = CHUNK_KEY_BYTES + size + PER_ITEM_BYTES;
    if (i > from && (bytes + cost > LIMITS.atomicBytes || i - from >= LIMITS.mutations)) {
      groups.push([from, i]);
      from = i;
      bytes = 0;
    }
    bytes += cost;
  });
  if (sizes.length > from) groups.push([from, sizes.length]);
  return groups;
}

function tooLarge(detail: string): FloretError {
  return new FloretError(
    "invalid_input",
    `Invalid commit: too large for one Deno KV atomic operation: ${detail}`,
  );
}

/**
 * Fits a commit into one Deno KV atomic operation: values over 64 KiB become
 * blobs, and if the whole operation would still exceed Deno's size limit the
 * largest remaining values become blobs too. Blobs are written before the
 * operation, under fresh ids nothing refers to yet, so the operation that
 * publishes them stays the commit's single atomic step.
 *
 * @param plan a validated commit
 * @param newId returns a fresh random blob id
 * @returns the layout
 * @throws {FloretError} `invalid_input` when a key is too long or the commit has
 *   more than 10 checks, more than 1,000 writes, or more key bytes than one
 *   operation holds (splitting those would give up atomicity)
 */
export function layOutCommit(plan: CommitPlan, newId: () => Uint8Array): CommitLayout {
  if (plan.checks.length > LIMITS.checks) {
    throw tooLarge(`${plan.checks.length} checks (at most ${LIMITS.checks})`);
  }
  if (plan.writes.length > LIMITS.mutations) {
    throw tooLarge(`${plan.writes.length} sets and deletes (at most ${LIMITS.mutations})`);
  }
  let bytes = 0;
  let setKeyBytes = 0;
  for (const check of plan.checks) {
    assertKeyFits(check.key);
    bytes += entryKeySize(check.key) + PER_ITEM_BYTES;
  }
  const sets: LaidOutSet[] = [];
  const deletes: Uint8Array[] = [];
  for (const write of plan.writes) {
    assertKeyFits(write.key);
    bytes += entryKeySize(write.key) + PER_ITEM_BYTES;
    if (write.value === null) deletes.push(write.key);
    else {
      setKeyBytes += entryKeySize(write.key);
      sets.push({ key: write.key, header: inlineHeader(write.value) });
    }
  }
  if (setKeyBytes > LIMITS.atomicSetKeyBytes) {
    throw tooLarge(`${setKeyBytes} bytes of keys (at most ${LIMITS.atomicSetKeyBytes})`);
  }
  const toBlob = (set: LaidOutSet): void => {
    const value = set.header.subarray(1);
    const blob = { id: newId(), length: value.length };
    bytes += CHUNKED_HEADER_BYTES - set.header.length;
    set.header = chunkedHeader(blob);
    set.blob = { ...blob, value };
  };
  for (const set of sets) {
    bytes += set.header.length;
    if (set.header.length > LIMITS.valueBytes) toBlob(set);
  }
  if (bytes > LIMITS.atomicBytes) {
    const inline = sets.filter((set) => !set.blob && set.header.length > CHUNKED_HEADER_BYTES)
      .sort((a, b) => b.header.length - a.header.length);
    for (const set of inline) {
      if (bytes <= LIMITS.atomicBytes) break;
      toBlob(set);
    }
    if (bytes > LIMITS.atomicBytes) throw tooLarge(`${bytes} bytes of keys and headers`);
  }
  return { checks: plan.checks, sets, deletes };
}
