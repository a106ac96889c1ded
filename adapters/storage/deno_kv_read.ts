/**
 * The Deno KV store's read path: headers in batches of Deno's `getMany`
 * limit, and entries resolved from their headers, with chunked values read
 * back and the whole read repeated if a blob vanished under it.
 *
 * @module
 */

import { decodeKey, FloretError } from "@floret/engine/spi";
import type { KvEntry } from "@floret/engine/spi";
import type { DenoKvHandle, DenoKvMaybeEntry } from "./deno_kv_handle.ts";
import { type Blob, entryKey, LIMITS, readHeader } from "./deno_kv_layout.ts";

/** A stored entry before its value is resolved. */
export interface StoredRow {
  /** The encoded SPI key. */
  key: Uint8Array;
  /** The stored header. */
  value: unknown;
  /** Deno's versionstamp: the entry's version. */
  versionstamp: string;
}

/**
 * A blob deleted under a reader means its entry was replaced after the read
 * began; a fresh read sees the replacement. Only a writer replacing the same
 * large value in a tight loop could starve a reader this many times.
 */
const READ_ATTEMPTS = 8;

/**
 * Reads the entry keys' current headers, ten keys (Deno's limit) per round trip, in parallel.
 *
 * @param kv the handle
 * @param keys encoded SPI keys
 * @returns Deno's answer per key, in order
 */
export async function readHeaders(
  kv: DenoKvHandle,
  keys: readonly Uint8Array[],
): Promise<DenoKvMaybeEntry[]> {
  const batches: Promise<DenoKvMaybeEntry[]>[] = [];
  for (let i = 0; i < keys.length; i += LIMITS.readKeys) {
    batches.push(kv.getMany(keys.slice(i, i + LIMITS.readKeys).map(entryKey)));
  }
  return (await Promise.all(batches)).flat();
}

async function resolve(
  row: StoredRow,
  readBlob: (blob: Blob) => Promise<Uint8Array | null>,
): Promise<KvEntry | undefined> {
  const header = readHeader(row.value);
  const value = header.kind === "inline" ? header.value : await readBlob(header.blob);
  if (value === null) return undefined;
  return { key: decodeKey(row.key), value, version: row.versionstamp };
}

/**
 * Resolves rows into entries, fetching the rows again while any chunked
 * value turns out to be gone.
 *
 * @param fetchRows reads the rows (null for a missing key)
 * @param readBlob reads a blob, null when chunks are missing
 * @returns the entries, null where a key is missing
 * @throws {FloretError} `storage_failure` when values keep vanishing
 */
export async function readEntries(
  fetchRows: () => Promise<(StoredRow | null)[]>,
  readBlob: (blob: Blob) => Promise<Uint8Array | null>,
): Promise<(KvEntry | null)[]> {
  for (let attempt = 0; attempt < READ_ATTEMPTS; attempt++) {
    const rows = await fetchRows();
    const entries = await Promise.all(rows.map((row) => row && resolve(row, readBlob)));
    if (!entries.includes(undefined)) return entries as (KvEntry | null)[];
  }
  throw new FloretError(
    "storage_failure",
    `Store read failed: a chunked value was missing in ${READ_ATTEMPTS} reads in a row`,
  );
}
