/**
 * A {@link KvStore} on Deno KV: a local database from `Deno.openKv(path)`, or
 * Deno Deploy's. Import it from `@floret/engine/deno-kv`; it is built only on
 * the public storage toolkit `@floret/engine/spi`.
 *
 * @module
 */

import { FloretError, planCommit, planGet, planScan } from "@floret/engine/spi";
import type {
  KvCommit,
  KvCommitResult,
  KvEntry,
  KvKey,
  KvListOptions,
  KvSelector,
  KvStore,
} from "@floret/engine/spi";
import { dropBlobs, readBlob, stageBlobs } from "./deno_kv_blobs.ts";
import { asDenoKvHandle, type DenoKvHandle, type DenoKvMaybeEntry } from "./deno_kv_handle.ts";
import { readEntries, readHeaders, type StoredRow } from "./deno_kv_read.ts";
import {
  assertKeyFits,
  type Blob,
  entryKey,
  layOutCommit,
  LIMITS,
  readHeader,
} from "./deno_kv_layout.ts";

/** Options of {@link denoKvStore}. */
export interface DenoKvStoreOptions {
  /**
   * Close the handle when the store closes. Default false: like
   * `libsqlStore({ client })`, the store leaves a handle it did not open alone.
   */
  closeKv?: boolean | undefined;
}

// Deno versionstamps: 20 lowercase hex digits. Any other version can match no
// entry, so a check carrying one fails without asking Deno (which would throw).
const VERSIONSTAMP = /^[0-9a-f]{20}$/;

function newBlobId(): Uint8Array {
  return crypto.getRandomValues(new Uint8Array(16));
}

function storageFailure(error: unknown, action: string): FloretError {
  if (error instanceof FloretError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new FloretError("storage_failure", `Store ${action} failed: ${message}`, { cause: error });
}

/** Old blobs go after their replacement is committed; failing to delete one only leaves garbage. */
async function dropQuietly(kv: DenoKvHandle, blobs: readonly Blob[]): Promise<void> {
  if (blobs.length === 0) return;
  try {
    await dropBlobs(kv, blobs);
  } catch {
    // Unreferenced chunks are invisible to every read.
  }
}

/** Blobs the replaced headers referred to; a header this store cannot read refers to none. */
function replacedBlobs(previous: readonly DenoKvMaybeEntry[]): Blob[] {
  return previous.flatMap((entry) => {
    if (entry.versionstamp === null) return [];
    try {
      const header = readHeader(entry.value);
      return header.kind === "chunked" ? [header.blob] : [];
    } catch {
      return [];
    }
  });
}

async function commitOn(kv: DenoKvHandle, op: KvCommit): Promise<KvCommitResult> {
  const layout = layOutCommit(planCommit(op), newBlobId);
  if (layout.checks.some((check) => check.version !== null && !VERSIONSTAMP.test(check.version))) {
    return { ok: false };
  }
  const staged = layout.sets.flatMap((set) => (set.blob ? [set.blob] : []));
  const written = [...layout.sets.map((set) => set.key), ...layout.deletes];
  let sent = false;
  try {
    // The headers being replaced name the blobs to delete after the commit.
    const [previous] = await Promise.all([readHeaders(kv, written), stageBlobs(kv, staged)]);
    const atomic = kv.atomic();
    for (const check of layout.checks) {
      atomic.check({ key: entryKey(check.key), versionstamp: check.version });
    }
    for (const set of layout.sets) atomic.set(entryKey(set.key), set.header);
    for (const key of layout.deletes) atomic.delete(entryKey(key));
    sent = true;
    const result = await atomic.commit();
    if (!result.ok) {
      await dropQuietly(kv, staged);
      return { ok: false };
    }
    await dropQuietly(kv, replacedBlobs(previous));
    return { ok: true, version: result.versionstamp };
  } catch (error) {
    // Once the operation went out it may have landed (a remote answer can be
    // lost), and its staged blobs may be referenced: keep them then.
    if (!sent) await dropQuietly(kv, staged);
    throw storageFailure(error, "commit");
  }
}

/**
 * Creates a store over a Deno KV handle. Each entry is one Deno key holding
 * the encoded SPI key as a single byte part, so Deno's order is the SPI's and
 * Deno's versionstamps are the versions. Values above 64 KiB (and, when a
 * commit would exceed Deno's 800 KiB per operation, the largest values) are
 * written in chunks before the commit and published by its one atomic
 * operation. A commit with more than 10 checks, more than 1,000 sets and
 * deletes, or a key over 2 KiB once encoded fails with `invalid_input`: it
 * could not be atomic on Deno KV. The engine's own commits stay far below.
 *
 * @param kv a `Deno.Kv` from `Deno.openKv(...)` (typed `unknown` so the package
 *   type-checks without Deno's types); on Deno 2.9 that needs `--unstable-kv`
 *   or `"unstable": ["kv"]` in deno.json
 * @param options `closeKv` to close the handle with the store
 * @returns the store
 * @throws {FloretError} `invalid_input` when `kv` is not a Deno KV handle
 * @example
 * ```ts ignore
 * import { openHost } from "@floret/engine";
 * import { denoKvStore } from "@floret/engine/deno-kv";
 * const kv = await Deno.openKv("./floret.kv");
 * const host = await openHost({ store: denoKvStore(kv, { closeKv: true }) });
 * await host.shutdown();
 * ```
 */
export function denoKvStore(kv: unknown, options: DenoKvStoreOptions = {}): KvStore {
  const handle = asDenoKvHandle(kv);
  if (options === null || typeof options !== "object") {
    throw new FloretError("invalid_input", "Invalid denoKvStore options: expected an object");
  }
  const closeKv = options.closeKv ?? false;
  let closed = false;
  const live = (): DenoKvHandle => {
    if (closed) throw new FloretError("storage_failure", "Store is closed: denoKvStore");
    return handle;
  };

  return {
    async getMany(keys: readonly KvKey[]): Promise<(KvEntry | null)[]> {
      const encoded = planGet(keys);
      for (const key of encoded) assertKeyFits(key);
      const db = live();
      if (encoded.length === 0) return [];
      try {
        return await readEntries(
          () =>
            readHeaders(db, encoded).then((found) =>
              found.map((entry, i) =>
                entry.versionstamp === null ? null : {
                  key: encoded[i],
                  value: entry.value,
                  versionstamp: entry.versionstamp,
                }
              )
            ),
          (blob) => readBlob(db, blob),
        );
      } catch (error) {
        throw storageFailure(error, "read");
      }
    },

    async list(selector: KvSelector, listOptions?: KvListOptions): Promise<KvEntry[]> {
      const scan = planScan(selector, listOptions);
      assertKeyFits(scan.lower, LIMITS.readKeyBytes);
      assertKeyFits(scan.upper, LIMITS.readKeyBytes);
      const db = live();
      if (scan.empty) return [];
      const limit = Number.isFinite(scan.limit) ? scan.limit : undefined;
      try {
        return (await readEntries(async () => {
          const rows: StoredRow[] = [];
          const iterator = db.list({ start: entryKey(scan.lower), end: entryKey(scan.upper) }, {
            reverse: scan.reverse,
            limit,
            // Each batch is one consistent read, so the biggest batch Deno allows
            // keeps listings of up to 1,000 entries a snapshot.
            batchSize: Math.min(limit ?? LIMITS.listBatch, LIMITS.listBatch),
          });
          for await (const row of iterator) {
            const [key, ...rest] = row.key;
            if (!(key instanceof Uint8Array) || rest.length > 0) {
              throw new FloretError(
                "storage_failure",
                "Deno KV key was not written by denoKvStore",
              );
            }
            rows.push({ key, value: row.value, versionstamp: row.versionstamp });
          }
          return rows;
        }, (blob) => readBlob(db, blob))).filter((entry) => entry !== null);
      } catch (error) {
        throw storageFailure(error, "list");
      }
    },

    async commit(op: KvCommit): Promise<KvCommitResult> {
      return await commitOn(live(), op);
    },

    close(): Promise<void> {
      if (!closed && closeKv) handle.close();
      closed = true;
      return Promise.resolve();
    },
  };
}

// The engine types this entry's functions take and return, re-exported so its
// documentation is complete on its own (deno doc --lint, JSR).
export type * from "./store_types.ts";
