/**
 * How a {@link ThreadCommit} becomes store writes: its checks, record,
 * index rows, markers, entries, request record and extras, in one fixed
 * order, written either as a {@link KvCommit} for a store's `commit` or as a
 * plan for a store that commits synchronously (the memory store), with the
 * thread's encoded keys cached so a step's append encodes only its seq.
 *
 * @module
 */
import type { KvCommit, KvKey } from "../spi/kv_store.ts";
import { encodeKey, encodeKeyWithNumber, numberPartString } from "../spi/key_codec.ts";
import { bytesToMapKey } from "../spi/kv_commit_plan.ts";
import type { DeferredJson, OwnedCheck, OwnedPlan, OwnedWrite } from "../spi/kv_planned_commit.ts";
import { encodeText, encodeValue } from "./codec.ts";
import type { Entry } from "./entries.ts";
import type { ThreadCommit } from "./journal.ts";
import { keys } from "./keys.ts";
import { noteEarlierUpdate } from "./list_order.ts";
import type { ThreadRecord } from "./thread_record.ts";

/** Where a thread commit's checks and writes go: a store operation, or a plan. */
interface CommitSink {
  check(key: KvKey, version: string | null): void;
  /** Checks `keys.thread(threadId)` (every commit does, first). */
  checkThread(threadId: string, version: string | null): void;
  /** Writes a JSON value (see codec.ts). */
  set(key: KvKey, value: unknown): void;
  /** Writes the thread record at `keys.thread(threadId)`. */
  setThread(threadId: string, record: ThreadRecord): void;
  /** Writes an entry at `keys.entry(threadId, entry.seq)`. */
  setEntry(threadId: string, entry: Entry): void;
  /** Checks that `key` is absent, then writes a JSON value there (a request record). */
  setNew(key: KvKey, value: unknown): void;
  /** Writes an empty value (an index row or a marker). */
  mark(key: KvKey): void;
  remove(key: KvKey): void;
}

/** Collects a {@link KvCommit} for a store's `commit`. */
class OpSink implements CommitSink {
  readonly op: Required<KvCommit> = { checks: [], set: [], delete: [] };
  check(key: KvKey, version: string | null): void {
    this.op.checks.push({ key, version });
  }
  checkThread(threadId: string, version: string | null): void {
    this.check(keys.thread(threadId), version);
  }
  set(key: KvKey, value: unknown): void {
    this.op.set.push({ key, value: encodeValue(value) });
  }
  setThread(threadId: string, record: ThreadRecord): void {
    this.set(keys.thread(threadId), record);
  }
  setEntry(threadId: string, entry: Entry): void {
    this.set(keys.entry(threadId, entry.seq), entry);
  }
  setNew(key: KvKey, value: unknown): void {
    this.check(key, null);
    this.set(key, value);
  }
  mark(key: KvKey): void {
    this.op.set.push({ key, value: new Uint8Array() });
  }
  remove(key: KvKey): void {
    this.op.delete.push(key);
  }
}

/**
 * Collects the plan `planOwnedCommit` would make of the same operation, with
 * each JSON value as text (an {@link OwnedPlan}: the store encodes it on read).
 */
class PlanSink implements CommitSink {
  readonly #checks: OwnedCheck[] = [];
  readonly #writes: OwnedWrite[] = [];
  #deletes: OwnedWrite[] | undefined;
  // Every key goes with its map id: the store needs it anyway, and the plan's
  // duplicate check then compares ids (see checkedOwnPlan).
  check(key: KvKey, version: string | null): void {
    const bytes = encodeKey(key);
    this.#checks.push({ key: bytes, id: bytesToMapKey(bytes), version });
  }
  checkThread(threadId: string, version: string | null): void {
    const cached = threadKeysOf(threadId);
    this.#checks.push({ key: cached.thread, id: cached.threadId, version });
  }
  set(key: KvKey, value: unknown): void {
    const bytes = encodeKey(key);
    this.#writes.push({ key: bytes, id: bytesToMapKey(bytes), value: encodeText(value) });
  }
  setThread(threadId: string, record: ThreadRecord): void {
    const cached = threadKeysOf(threadId);
    this.#writes.push({ key: cached.thread, id: cached.threadId, value: new RecordJson(record) });
  }
  setEntry(threadId: string, entry: Entry): void {
    this.#writes.push(entryWrite(threadKeysOf(threadId), entry));
  }
  setNew(key: KvKey, value: unknown): void {
    // One encoding (and one map id) serves the check and the write: plans only read their keys.
    const bytes = encodeKey(key);
    const id = bytesToMapKey(bytes);
    this.#checks.push({ key: bytes, id, version: null });
    this.#writes.push({ key: bytes, id, value: encodeText(value) });
  }
  mark(key: KvKey): void {
    // Empty text stands for zero bytes: no buffer made (or kept by the store) per marker.
    const bytes = encodeKey(key);
    this.#writes.push({ key: bytes, id: bytesToMapKey(bytes), value: "" });
  }
  remove(key: KvKey): void {
    const bytes = encodeKey(key);
    (this.#deletes ??= []).push({ key: bytes, id: bytesToMapKey(bytes), value: null });
  }
  /** Sets first, then deletes, as a plan orders them. */
  plan(): OwnedPlan {
    const writes = this.#deletes ? this.#writes.concat(this.#deletes) : this.#writes;
    return { checks: this.#checks, writes };
  }
}

/** The store operation of one thread commit: the record's check and rows, entries, extras. */
export function commitOf(change: ThreadCommit): Required<KvCommit> {
  const sink = new OpSink();
  writeCommit(change, sink);
  return sink.op;
}

/** Writes one thread commit's checks and writes, in order, to `sink`. */
function writeCommit(change: ThreadCommit, sink: CommitSink): void {
  const { record, expected } = change;
  const threadId = record?.id ?? expected!.record.id;
  sink.checkThread(threadId, expected?.version ?? null);
  if (record) {
    if (expected && expected.record.updatedAt !== record.updatedAt) {
      // Before the record's text is made: the thread's place in the list moves (list_order.ts).
      noteEarlierUpdate(record, expected.record);
    }
    sink.setThread(threadId, record);
    if (expected?.record.updatedAt !== record.updatedAt) {
      if (expected) {
        sink.remove(keys.updated(Date.parse(expected.record.updatedAt), record.id));
      }
      if (!record.deleted) {
        sink.mark(keys.updated(Date.parse(record.updatedAt), record.id));
      }
    }
    if (record.active && !expected?.record.active) {
      sink.mark(keys.active(record.id));
    } else if (!record.active && expected?.record.active) {
      sink.remove(keys.active(record.id));
    }
  }
  // Absent lists are skipped, not replaced by a fresh `[]` each (two or three per commit).
  const { entries, set, delete: deletes, checks } = change;
  if (entries) { for (const entry of entries) sink.setEntry(threadId, entry); }
  if (change.request) {
    sink.setNew(keys.request(change.request.scope, change.request.key), change.request.value);
  }
  if (set) { for (const extra of set) sink.set(extra.key, extra.value); }
  if (deletes) { for (const key of deletes) sink.remove(key); }
  if (checks) { for (const check of checks) sink.check(check.key, check.version); }
}

/**
 * A thread's encoded record key and entry prefix, which every commit to it
 * needs, with their map ids (see {@link OwnedWrite.id}).
 */
interface ThreadKeys {
  /** `encodeKey(keys.thread(id))`; shared by plans, which only read their keys. */
  thread: Uint8Array;
  /** `bytesToMapKey(thread)`. */
  threadId: string;
  /** `encodeKey(keys.entries(id))`, which an entry's key extends with its seq. */
  entries: Uint8Array;
  /** `bytesToMapKey(entries)`, which an entry's id extends with its seq's part. */
  entriesId: string;
}

// Bounded like the key codec's string cache: dropped whole when full, which
// costs one encoding per thread afterwards.
const THREAD_KEYS_LIMIT = 4096;
const threadKeys = new Map<string, ThreadKeys>();

/** The thread's encoded keys, encoded once (invalid ids throw as `encodeKey` does, uncached). */
function threadKeysOf(threadId: string): ThreadKeys {
  let cached = threadKeys.get(threadId);
  if (!cached) {
    const thread = encodeKey(keys.thread(threadId));
    const entries = encodeKey(keys.entries(threadId));
    cached = {
      thread,
      threadId: bytesToMapKey(thread),
      entries,
      entriesId: bytesToMapKey(entries),
    };
    if (threadKeys.size >= THREAD_KEYS_LIMIT) threadKeys.clear();
    threadKeys.set(threadId, cached);
  }
  return cached;
}

/**
 * An entry's write: its id (the thread's cached prefix id and the seq's
 * part) and the entry as a {@link DeferredJson} (itself): a store that keeps
 * values in memory holds the entry and makes its JSON text only if the entry
 * is read, as most never are; JSON.stringify was the largest single cost of a
 * step's commit. Entries are never changed once committed (a projection copies
 * what it keeps), so the text is the one an eager encoding would have made.
 * Its key's bytes are made only if read: the memory store goes by the id, and
 * a plan's duplicate check compares keys only between two or more writes, so
 * an append's single entry never makes them.
 */
class EntryWrite implements OwnedWrite, DeferredJson {
  readonly id: string;
  readonly value: DeferredJson;
  readonly #entry: Entry;
  readonly #prefix: Uint8Array;
  constructor(cached: ThreadKeys, entry: Entry) {
    this.id = cached.entriesId + numberPartString(entry.seq);
    this.value = this;
    this.#entry = entry;
    this.#prefix = cached.entries;
  }
  /** The entry's JSON text (see codec.ts), made on each call. */
  json(): string {
    return encodeText(this.#entry);
  }
  /** `encodeKey(keys.entry(threadId, seq))`, fresh on each read. */
  get key(): Uint8Array {
    return encodeKeyWithNumber(this.#prefix, this.#entry.seq);
  }
}

/**
 * A thread record as {@link DeferredJson}: its text made when the store reads
 * it. A commit's record is a new object that nothing changes afterwards (the
 * next commit copies it), like an entry.
 */
class RecordJson implements DeferredJson {
  readonly #record: ThreadRecord;
  constructor(record: ThreadRecord) {
    this.#record = record;
  }
  /** The record's JSON text (see codec.ts), made on each call. */
  json(): string {
    return encodeText(this.#record);
  }
}

/** An entry's write (see {@link EntryWrite}). */
function entryWrite(cached: ThreadKeys, entry: Entry): OwnedWrite {
  return new EntryWrite(cached, entry);
}

/**
 * The plan of an append (every step of a run commits one or two): what the
 * sink would collect, the record's check and the entries' writes, built as
 * arrays of their final length (no sink, no arrays grown by push).
 */
function appendPlan(threadId: string, version: string, entries: readonly Entry[]): OwnedPlan {
  const cached = threadKeysOf(threadId);
  const checks: OwnedCheck[] = [{ key: cached.thread, id: cached.threadId, version }];
  if (entries.length === 1) return { checks, writes: [entryWrite(cached, entries[0])] };
  const writes: OwnedWrite[] = [];
  for (const entry of entries) writes.push(entryWrite(cached, entry));
  return { checks, writes };
}

/**
 * The plan of one thread commit for a store that commits synchronously, the
 * same checks and writes as {@link commitOf} with values as JSON text.
 */
export function planOf(change: ThreadCommit): OwnedPlan {
  const { record, expected, entries } = change;
  if (
    record === null && expected !== null && entries !== undefined && !change.request &&
    !change.set && !change.delete && !change.checks
  ) {
    return appendPlan(expected.record.id, expected.version, entries);
  }
  const sink = new PlanSink();
  writeCommit(change, sink);
  return sink.plan();
}
