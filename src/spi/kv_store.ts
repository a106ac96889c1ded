/**
 * The storage SPI: an ordered, versioned key-value store that holds opaque
 * bytes. The engine owns every encoding; adapters only store and order.
 *
 * @module
 */

/**
 * One part of a key. Parts order first by type — Uint8Array < string < number
 * < bigint < boolean (as in Deno KV) — then by value.
 */
export type KvKeyPart = string | number | bigint | boolean | Uint8Array;

/** A key: a tuple of parts. A shorter tuple sorts before any longer tuple it prefixes. */
export type KvKey = readonly KvKeyPart[];

/** A stored entry. */
export interface KvEntry {
  /** The decoded key. */
  key: KvKey;
  /** The stored bytes (a copy the caller owns). */
  value: Uint8Array;
  /** Opaque; a later commit's version compares greater with plain string comparison. */
  version: string;
}

/**
 * `prefix`: every key longer than the prefix that starts with its parts (the
 * prefix key itself is excluded, as in Deno KV). `start`/`end`: keys k with
 * start <= k < end in tuple order.
 */
export type KvSelector = { prefix: KvKey } | { start: KvKey; end: KvKey };

/** Paging options of {@link KvStore.list}. */
export interface KvListOptions {
  /** At most this many entries; 0 returns none. */
  limit?: number;
  /** Descending key order. */
  reverse?: boolean;
  /** Continue after this key (exclusive), in the listing's direction. */
  after?: KvKey;
}

/** One atomic write: every check must hold, then every set and delete applies. */
export interface KvCommit {
  /** `version: null` means the key must not exist. */
  checks?: { key: KvKey; version: string | null }[];
  /** Values to write. */
  set?: { key: KvKey; value: Uint8Array }[];
  /** Keys to remove (absent keys are fine). */
  delete?: KvKey[];
}

/** The result of {@link KvStore.commit}: a failed check is `{ ok: false }`, never a throw. */
export type KvCommitResult = { ok: true; version: string } | { ok: false };

/**
 * An ordered key-value store with atomic checked commits. I/O failures throw
 * `FloretError("storage_failure")`; a failed commit writes nothing.
 */
export interface KvStore {
  /** Reads several keys at once; `null` for a missing key. */
  getMany(keys: readonly KvKey[]): Promise<(KvEntry | null)[]>;
  /** Lists entries in key order (or reverse). */
  list(selector: KvSelector, options?: KvListOptions): Promise<KvEntry[]>;
  /** Applies checks, sets and deletes atomically. */
  commit(op: KvCommit): Promise<KvCommitResult>;
  /** Releases resources; later calls fail. */
  close(): Promise<void>;
}
