/**
 * Values larger than one Deno KV value, kept as blobs of 64 KiB chunks.
 *
 * A blob is written ("staged") under a fresh random id before the commit that
 * publishes it, so nobody can see it half-written: only the entry's header,
 * set in the commit's single atomic operation, makes it reachable. A blob is
 * never modified; a new value gets a new blob, and the old one is deleted
 * once the commit that replaced its header has succeeded. A reader that finds
 * a chunk missing has raced such a deletion and reads the entry again.
 *
 * @module
 */

import type { DenoKvHandle } from "./deno_kv_handle.ts";
import {
  type Blob,
  BLOB_SPACE,
  chunkCount,
  chunkGroups,
  chunkKey,
  LIMITS,
} from "./deno_kv_layout.ts";

/** Chunks fetched per list round trip when reading a blob back (a few MiB). */
const READ_BATCH = 64;

/**
 * Writes blobs' chunks, in as many atomic operations as Deno KV's size limit needs.
 *
 * @param kv the handle
 * @param blobs the blobs with their bytes
 */
export async function stageBlobs(
  kv: DenoKvHandle,
  blobs: readonly (Blob & { value: Uint8Array })[],
): Promise<void> {
  const chunks = blobs.flatMap((blob) =>
    Array.from({ length: chunkCount(blob.length) }, (_, index) => ({
      key: chunkKey(blob.id, index),
      value: blob.value.subarray(index * LIMITS.valueBytes, (index + 1) * LIMITS.valueBytes),
    }))
  );
  for (const [from, to] of chunkGroups(chunks.map((chunk) => chunk.value.length))) {
    const atomic = kv.atomic();
    for (const chunk of chunks.slice(from, to)) atomic.set(chunk.key, chunk.value);
    const result = await atomic.commit();
    // Unchecked operations only fail by throwing; this guards a handle that says otherwise.
    if (!result.ok) throw new Error("Deno KV refused an unchecked write");
  }
}

/**
 * Reads a blob back.
 *
 * @param kv the handle
 * @param blob the blob a header refers to
 * @returns its bytes, or null when chunks are missing (deleted after the header was read)
 */
export async function readBlob(kv: DenoKvHandle, blob: Blob): Promise<Uint8Array | null> {
  const count = chunkCount(blob.length);
  const out = new Uint8Array(blob.length);
  let index = 0;
  const chunks = kv.list({ prefix: [BLOB_SPACE, blob.id] }, {
    batchSize: Math.max(1, Math.min(count, READ_BATCH)),
  });
  for await (const chunk of chunks) {
    const offset = index * LIMITS.valueBytes;
    const expected = Math.min(LIMITS.valueBytes, blob.length - offset);
    if (
      chunk.key[2] !== index || !(chunk.value instanceof Uint8Array) ||
      chunk.value.length !== expected
    ) {
      return null;
    }
    out.set(chunk.value, offset);
    index++;
  }
  return index === count ? out : null;
}

/**
 * Deletes blobs; their ids are unique, so a blob nothing refers to can go at any time.
 *
 * @param kv the handle
 * @param blobs the blobs to delete
 */
export async function dropBlobs(kv: DenoKvHandle, blobs: readonly Blob[]): Promise<void> {
  const keys = blobs.flatMap((blob) =>
    Array.from({ length: chunkCount(blob.length) }, (_, index) => chunkKey(blob.id, index))
  );
  for (const [from, to] of chunkGroups(keys.map(() => 0))) {
    const atomic = kv.atomic();
    for (const key of keys.slice(from, to)) atomic.delete(key);
    await atomic.commit();
  }
}
