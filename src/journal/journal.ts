/**
 * The journal: typed reads and checked commits over the KvStore. Every commit
 * to a thread checks the thread record's version, so a commit either lands
 * whole on the state it was planned against or not at all.
 *
 * @module
 */
import { FloretError } from "../errors.ts";
import type { KvCommit, KvCommitResult, KvKey, KvStore } from "../spi/kv_store.ts";
import { checkedOwnPlan } from "../spi/kv_commit_plan.ts";
import { type PlannedCommit, plannedCommitOf, plannedVersionOf } from "../spi/kv_planned_commit.ts";
import { checkStoredShape, decodeJson, decodeValue, encodeValue } from "./codec.ts";
import { commitOf, planOf } from "./commit_writer.ts";
import { boundedStore, DEFAULT_STORE_TIMEOUT_MS } from "./bounded_store.ts";
import {
  entryShapes,
  requestRecordShape,
  schemaMarkerShape,
  threadRecordShape,
} from "./stored_shapes.ts";
import type { z } from "zod";
import { type Entry, ENTRY_KINDS } from "./entries.ts";
import { keys, STORE_SCHEMA_VERSION } from "./keys.ts";
import type { ThreadRecord } from "./thread_record.ts";

/** What a request key committed: replays return `result`. */
export interface RequestRecord {
  op: string;
  fingerprint: string;
  result: Record<string, unknown>;
}

/** A thread record with the version it was read at. */
export interface VersionedRecord {
  record: ThreadRecord;
  version: string;
}

/** One atomic change to one thread. */
export interface ThreadCommit {
  /** The record as read (`null`: the thread must not exist yet). */
  expected: VersionedRecord | null;
  /**
   * The record to write; `null` appends entries checked against the record's
   * version without rewriting it. That is safe because every other writer of
   * a thread (commands, other hosts, recovery) rewrites the record, so its
   * version still orders all writes; only the run that owns the active turn
   * appends this way.
   */
  record: ThreadRecord | null;
  /** New entries, `seq` already assigned. */
  entries?: Entry[];
  /** A request key to claim (it must not exist). */
  request?: { scope: string; key: string; value: RequestRecord };
  /** Other writes in the same commit. */
  set?: { key: KvKey; value: unknown }[];
  delete?: KvKey[];
  checks?: { key: KvKey; version: string | null }[];
}

/** Typed access to the engine's keyspace. */
export class Journal {
  readonly #store: KvStore;
  // The store's internal fast path for thread commits, when it offers one.
  readonly #planned: PlannedCommit | undefined;
  // The store's synchronous version read, when it offers one (the memory store).
  readonly #version: ((key: KvKey) => string | null) | undefined;

  private constructor(store: KvStore, timeoutMs: number) {
    // Every awaited call is bounded; the synchronous fast paths cannot hang.
    this.#store = boundedStore(store, timeoutMs);
    this.#planned = plannedCommitOf(store);
    this.#version = plannedVersionOf(store);
  }

  /**
   * Opens the journal on a store, writing the schema marker on first use.
   *
   * @param store the store
   * @param timeoutMs the deadline of every store call (default 30 s)
   * @throws {FloretError} `store_too_new` when a newer engine wrote the store;
   *   `storage_failure` when the store refuses the marker and none is there,
   *   or does not answer in time
   */
  static async open(store: KvStore, timeoutMs = DEFAULT_STORE_TIMEOUT_MS): Promise<Journal> {
    const journal = new Journal(store, timeoutMs);
    store = journal.#store;
    const [marker] = await guard(() => store.getMany([keys.schema()]));
    if (!marker) {
      const result = await guard(() =>
        store.commit({
          checks: [{ key: keys.schema(), version: null }],
          set: [{ key: keys.schema(), value: encodeValue({ version: STORE_SCHEMA_VERSION }) }],
        })
      );
      if (result.ok) return journal;
      // Refused: another process initialised the store first, so the marker
      // is there now. If it is not, the store refuses writes it should take.
      const [written] = await guard(() => store.getMany([keys.schema()]));
      if (!written) {
        throw new FloretError(
          "storage_failure",
          "The store refused to write the schema marker, and none is there",
        );
      }
      return Journal.#checked(journal, written.value);
    }
    return Journal.#checked(journal, marker.value);
  }

  /** The journal, once the marker says this engine can read the store. */
  static #checked(journal: Journal, marker: Uint8Array): Journal {
    const { version } = decodeValue<{ version: number }>(
      marker,
      schemaMarkerShape,
      "schema marker",
    );
    if (version > STORE_SCHEMA_VERSION) {
      throw new FloretError(
        "store_too_new",
        `Store schema ${version} is newer than this engine supports: ${STORE_SCHEMA_VERSION}`,
      );
    }
    return journal;
  }

  /** The underlying store (closed by the host at shutdown). */
  get store(): KvStore {
    return this.#store;
  }

  /**
   * Closes the store.
   *
   * @throws {FloretError} `storage_failure` when the store's `close()` fails
   */
  async close(): Promise<void> {
    await guard(() => this.#store.close());
  }

  /** Reads a thread record. */
  async thread(threadId: string): Promise<VersionedRecord | null> {
    const [entry] = await guard(() => this.#store.getMany([keys.thread(threadId)]));
    return entry
      ? {
        record: decodeValue<ThreadRecord>(entry.value, threadRecordShape, "thread record"),
        version: entry.version,
      }
      : null;
  }

  /**
   * The version of a thread's record, without decoding it (`null` when it is
   * missing): enough to tell whether a record held in memory is still current.
   */
  threadVersion(threadId: string): Promise<string | null> {
    const version = this.#version;
    if (version) return guard(() => Promise.resolve(version(keys.thread(threadId))));
    return guard(() => this.#store.getMany([keys.thread(threadId)])).then(([entry]) =>
      entry ? entry.version : null
    );
  }

  /** Reads several thread records at once (`null` for missing ones). */
  async threads(threadIds: readonly string[]): Promise<(ThreadRecord | null)[]> {
    if (threadIds.length === 0) return [];
    const rows = await guard(() => this.#store.getMany(threadIds.map((id) => keys.thread(id))));
    return rows.map((
      row,
    ) => (row ? decodeValue<ThreadRecord>(row.value, threadRecordShape, "thread record") : null));
  }

  /** Reads a committed request key. */
  async request(scope: string, key: string): Promise<RequestRecord | null> {
    const [entry] = await guard(() => this.#store.getMany([keys.request(scope, key)]));
    return entry
      ? decodeValue<RequestRecord>(entry.value, requestRecordShape, "request record")
      : null;
  }

  /**
   * Reads the entries on a thread's path: its fork sources' entries first,
   * then its own, up to `maxSeq` (default: all). The record's own `seq` may
   * lag behind its entries: mid-turn commits append without rewriting it.
   */
  readPath(record: ThreadRecord, maxSeq: number = Number.MAX_SAFE_INTEGER): Promise<Entry[]> {
    return this.#entriesUpTo(record, maxSeq);
  }

  async #entriesUpTo(record: ThreadRecord, maxSeq: number): Promise<Entry[]> {
    let inherited: Entry[] = [];
    if (record.base) {
      const source = await this.thread(record.base.threadId);
      if (!source) {
        throw new FloretError("storage_failure", `Fork source is missing: ${record.base.threadId}`);
      }
      inherited = await this.#entriesUpTo(source.record, Math.min(record.base.seq, maxSeq));
    }
    const own = await guard(() =>
      this.#store.list({
        start: keys.entry(record.id, 0),
        end: keys.entry(record.id, Math.min(maxSeq, Number.MAX_SAFE_INTEGER - 1) + 1),
      })
    );
    for (const item of own) inherited.push(decodeEntry(item.value));
    return inherited;
  }

  /**
   * Reads a thread's own entries with `from <= seq < to` in one range scan,
   * oldest first or (with `reverse`) newest first, at most `limit` of them.
   * Fork sources are not followed: see {@link PathReader} for a whole path.
   */
  async entryRange(
    threadId: string,
    from: number,
    to: number,
    options: { reverse?: boolean; limit?: number } = {},
  ): Promise<Entry[]> {
    if (to <= from) return [];
    const rows = await guard(() =>
      this.#store.list(
        { start: keys.entry(threadId, from), end: keys.entry(threadId, to) },
        options,
      )
    );
    return rows.map((row) => decodeEntry(row.value));
  }

  /** Threads that had an admitted turn when their process stopped. */
  async activeThreadIds(): Promise<string[]> {
    const rows = await guard(() => this.#store.list({ prefix: keys.activeAll() }));
    return rows.map((row) => row.key[1] as string);
  }

  /** Lists thread ids, most recently updated first. */
  async recentlyUpdated(limit: number, after?: KvKey): Promise<{ threadId: string; key: KvKey }[]> {
    const rows = await guard(() =>
      this.#store.list({ prefix: keys.updatedAll() }, { reverse: true, limit, after })
    );
    return rows.map((row) => ({ threadId: row.key[2] as string, key: row.key }));
  }

  /**
   * The `updated` index rows of threads updated after `at` (epoch ms), newest
   * first, at most `limit`: the threads that moved since a listing began.
   */
  async updatedAfter(at: number, limit: number): Promise<{ threadId: string; key: KvKey }[]> {
    const rows = await guard(() =>
      this.#store.list(
        {
          start: [...keys.updatedAll(), at + 1],
          end: [...keys.updatedAll(), Number.MAX_SAFE_INTEGER],
        },
        { reverse: true, limit },
      )
    );
    return rows.map((row) => ({ threadId: row.key[2] as string, key: row.key }));
  }

  /** Lists the ids under a two-part index prefix (forks of a thread, children of a thread). */
  async indexed(prefix: KvKey): Promise<string[]> {
    const rows = await guard(() => this.#store.list({ prefix }));
    return rows.map((row) => row.key[2] as string);
  }

  /**
   * Reads one stored JSON value.
   *
   * @param key where it is stored
   * @param shape the schema it must match
   * @param what names it in errors
   * @throws {FloretError} `storage_failure` for a value of the wrong shape
   */
  async value<T>(key: KvKey, shape: z.ZodType, what: string): Promise<T | null> {
    const [entry] = await guard(() => this.#store.getMany([key]));
    return entry ? decodeValue<T>(entry.value, shape, what) : null;
  }

  /**
   * Commits one change to a thread atomically.
   *
   * @returns the new record version, or `null` when a check failed (someone else wrote first)
   */
  commit(change: ThreadCommit): Promise<string | null> {
    // Not async (every step commits twice); a change that cannot be encoded still rejects.
    const planned = this.#planned;
    if (planned) {
      try {
        return Promise.resolve(this.#commitPlanned(planned, change));
      } catch (cause) {
        return Promise.reject(cause);
      }
    }
    let op: Required<KvCommit>;
    try {
      op = commitOf(change);
    } catch (error) {
      return Promise.reject(error);
    }
    return guard(() => this.#store.commit(op)).then((result) => landedVersion(result, change));
  }

  /** Whether {@link commitNow} serves: the store commits synchronously (the memory store). */
  get commitsNow(): boolean {
    return this.#planned !== undefined;
  }

  /**
   * {@link commit} without a promise, for a store that commits synchronously
   * (see {@link commitsNow}): the actor applies the outcome in the same tick.
   *
   * @returns the new record version, or `null` when a check failed
   * @throws {FloretError} what {@link commit} would reject with
   */
  commitNow(change: ThreadCommit): string | null {
    const planned = this.#planned;
    if (!planned) throw new FloretError("internal", "commitNow needs a synchronous store");
    return this.#commitPlanned(planned, change);
  }

  // The plan is built straight from the change (keys encoded once, no tuple
  // form in between); its values are JSON text made for this commit alone, so
  // the store keeps them as they are (encoding on read), and it answers in the same tick.
  #commitPlanned(planned: PlannedCommit, change: ThreadCommit): string | null {
    const plan = planOf(change);
    let result: KvCommitResult;
    try {
      result = planned(checkedOwnPlan(plan));
    } catch (cause) {
      throw storeFailure(cause);
    }
    return landedVersion(result, change);
  }

  /** The ids under a one-part marker prefix (title claims), e.g. `["title_pending", id]`. */
  async idsUnder(prefix: KvKey): Promise<string[]> {
    const rows = await guard(() => this.#store.list({ prefix }));
    return rows.map((row) => row.key[1] as string);
  }

  /** Thread ids in key order, a page at a time (`after`: the last id of the previous page). */
  async threadIdPage(limit: number, after?: string): Promise<string[]> {
    const rows = await guard(() =>
      this.#store.list({ prefix: keys.threadAll() }, {
        limit,
        after: after === undefined ? undefined : keys.thread(after),
      })
    );
    return rows.map((row) => row.key[1] as string);
  }

  /** Deletes keys in chunks, outside any thread commit (garbage after a tombstone). */
  async purge(prefix: KvKey): Promise<void> {
    for (;;) {
      const rows = await guard(() => this.#store.list({ prefix }, { limit: 256 }));
      if (rows.length === 0) return;
      await this.deleteKeys(rows.map((row) => row.key));
    }
  }

  /**
   * Deletes keys outside any thread commit (index and garbage keys).
   *
   * @throws {FloretError} `storage_failure` when the store fails or refuses
   */
  async deleteKeys(keys: KvKey[]): Promise<void> {
    const result = await guard(() => this.#store.commit({ delete: keys }));
    // An unchecked delete cannot lose a race; a refusal is a broken store.
    if (!result.ok) throw new FloretError("storage_failure", "The store refused a delete");
  }
}

/** The version a thread commit leaves, or null when its check failed. */
function landedVersion(result: KvCommitResult, change: ThreadCommit): string | null {
  if (!result.ok) return null;
  // An append leaves the record, and so its version, unchanged.
  return change.record ? result.version : change.expected!.version;
}

/** Store failures are `storage_failure`; adapter FloretErrors pass through unchanged. */
// Not async: one `then` instead of an async frame around every store call of every step.
function guard<T>(operation: () => Promise<T>): Promise<T> {
  try {
    return Promise.resolve(operation()).then(undefined, (cause: unknown) => {
      throw storeFailure(cause);
    });
  } catch (cause) {
    return Promise.reject(storeFailure(cause));
  }
}

/** Decodes one stored entry, checking its kind and shape. */
function decodeEntry(bytes: Uint8Array): Entry {
  const value = decodeJson(bytes, "journal entry");
  const kind = (value as { kind?: unknown } | null)?.kind;
  if (typeof kind !== "string") {
    throw new FloretError("storage_failure", "Stored journal entry has no kind");
  }
  if (!ENTRY_KINDS.has(kind)) {
    throw new FloretError("store_too_new", `Unknown journal entry kind: ${kind}`);
  }
  return checkStoredShape<Entry>(value, entryShapes.get(kind)!, `${kind} entry`);
}

function storeFailure(cause: unknown): FloretError {
  if (cause instanceof FloretError) return cause;
  return new FloretError("storage_failure", `Store operation failed: ${String(cause)}`, { cause });
}
