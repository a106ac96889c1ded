/**
 * The part of a `Deno.Kv` handle the Deno KV store uses, written as a
 * structural type: the package type-checks for Node too, where Deno's global
 * types do not exist, and a handle is accepted as `unknown` and checked here.
 *
 * @module
 */

import { FloretError } from "@floret/engine/spi";

/** A Deno KV key part (Deno's own tuple parts, not ours). */
export type DenoKvKeyPart = Uint8Array | string | number | bigint | boolean;

/** A Deno KV key. */
export type DenoKvKey = readonly DenoKvKeyPart[];

/** What `get`/`getMany` return for one key: `versionstamp` is null when it is absent. */
export interface DenoKvMaybeEntry {
  /** The key asked for. */
  key: DenoKvKey;
  /** The stored value, or null. */
  value: unknown;
  /** Deno's version of the entry, or null when absent. */
  versionstamp: string | null;
}

/** One listed entry. */
export interface DenoKvListed {
  /** The stored key. */
  key: DenoKvKey;
  /** The stored value. */
  value: unknown;
  /** Deno's version of the entry. */
  versionstamp: string;
}

/** A `Deno.AtomicOperation` as far as the store uses it. */
export interface DenoKvAtomic {
  /** Adds version checks (`versionstamp: null` means absent). */
  check(...checks: { key: DenoKvKey; versionstamp: string | null }[]): DenoKvAtomic;
  /** Adds a write. */
  set(key: DenoKvKey, value: unknown): DenoKvAtomic;
  /** Adds a delete. */
  delete(key: DenoKvKey): DenoKvAtomic;
  /** Applies everything atomically; `{ ok: false }` when a check failed. */
  commit(): Promise<{ ok: true; versionstamp: string } | { ok: false }>;
}

/** A `Deno.Kv` handle as far as the store uses it. */
export interface DenoKvHandle {
  /** Reads up to 10 keys in one consistent snapshot. */
  getMany(keys: DenoKvKey[]): Promise<DenoKvMaybeEntry[]>;
  /** Lists a range; the iterator fetches `batchSize` entries per round trip. */
  list(
    selector: { start: DenoKvKey; end: DenoKvKey } | { prefix: DenoKvKey },
    options?: { limit?: number; reverse?: boolean; batchSize?: number },
  ): AsyncIterable<DenoKvListed>;
  /** Starts an atomic operation. */
  atomic(): DenoKvAtomic;
  /** Closes the handle. */
  close(): void;
}

/**
 * Checks that a value looks like a `Deno.Kv` handle.
 *
 * @param kv what the caller passed
 * @returns the same value, typed
 * @throws {FloretError} `invalid_input` when a method is missing
 */
export function asDenoKvHandle(kv: unknown): DenoKvHandle {
  const candidate = kv as Partial<Record<keyof DenoKvHandle, unknown>> | null;
  const methods: (keyof DenoKvHandle)[] = ["getMany", "list", "atomic", "close"];
  const missing = methods.filter((name) => typeof candidate?.[name] !== "function");
  if (candidate === null || typeof candidate !== "object" || missing.length > 0) {
    throw new FloretError(
      "invalid_input",
      `Invalid denoKvStore handle: expected a Deno.Kv (from Deno.openKv), missing ${
        missing.join(", ")
      }`,
    );
  }
  return candidate as DenoKvHandle;
}
