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
import type { PlannedCheck } from "../spi/kv_commit_plan.ts";
import { encodeKey, encodeKeyWithNumber } from "../spi/key_codec.ts";
import type { OwnedPlan, OwnedWrite } from "../spi/kv_planned_commit.ts";
import { encodeText, encodeValue } from "./codec.ts";
import type { Entry } from "./entries.ts";
import type { ThreadCommit } from "./journal.ts";
import { keys } from "./keys.ts";
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
  readonly #checks: PlannedCheck[] = [];
  readonly #writes: OwnedWrite[] = [];
  #deletes: OwnedWrite[] | undefined;
  check(key: KvKey, version: string | null): void {
    this.#checks.push({ key: encodeKey(key), version });
  }
  checkThread(threadId: string, version: string | null): void {
    this.#checks.push({ key: threadKeysOf(threadId).thread, version });
  }
  set(key: KvKey, value: unknown): void {
    this.#writes.push({ key: encodeKey(key), value: encodeText(value) });
  }
  setThread(threadId: string, record: ThreadRecord): void {
    this.#writes.push({ key: threadKeysOf(threadId).thread, value: encodeText(record) });
  }
  setEntry(threadId: string, entry: Entry): void {
    const key = encodeKeyWithNumber(threadKeysOf(threadId).entries, entry.seq);
    this.#writes.push({ key, value: encodeText(entry) });
  }
  mark(key: KvKey): void {
    this.#writes.push({ key: encodeKey(key), value: new Uint8Array() });
  }
  remove(key: KvKey): void {
    (this.#deletes ??= []).push({ key: encodeKey(key), value: null });
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
  for (const entry of change.entries ?? []) sink.setEntry(threadId, entry);
  if (change.request) {
    const key = keys.request(change.request.scope, change.request.key);
    sink.check(key, null);
    sink.set(key, change.request.value);
  }
  for (const extra of change.set ?? []) sink.set(extra.key, extra.value);
  for (const key of change.delete ?? []) sink.remove(key);
  for (const check of change.checks ?? []) sink.check(check.key, check.version);
}

/** A thread's encoded record key and entry prefix, which every commit to it needs. */
interface ThreadKeys {
  /** `encodeKey(keys.thread(id))`; shared by plans, which only read their keys. */
  thread: Uint8Array;
  /** `encodeKey(keys.entries(id))`, which an entry's key extends with its seq. */
  entries: Uint8Array;
}

// Bounded like the key codec's string cache: dropped whole when full, which
// costs one encoding per thread afterwards.
const THREAD_KEYS_LIMIT = 4096;
const threadKeys = new Map<string, ThreadKeys>();

/** The thread's encoded keys, encoded once (invalid ids throw as `encodeKey` does, uncached). */
function threadKeysOf(threadId: string): ThreadKeys {
  let cached = threadKeys.get(threadId);
  if (!cached) {
    cached = {
      thread: encodeKey(keys.thread(threadId)),
      entries: encodeKey(keys.entries(threadId)),
    };
    if (threadKeys.size >= THREAD_KEYS_LIMIT) threadKeys.clear();
    threadKeys.set(threadId, cached);
  }
  return cached;
}

/**
 * The plan of one thread commit for a store that commits synchronously, the
 * same checks and writes as {@link commitOf} with values as JSON text.
 */
export function planOf(change: ThreadCommit): OwnedPlan {
  const sink = new PlanSink();
  writeCommit(change, sink);
  return sink.plan();
}
