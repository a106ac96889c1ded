/**
 * Reads a thread's journal straight from the store, below the public API, so
 * the scale tests can check what the API cannot show: sequence numbers are
 * gap-free, every entry sits inside its own turn, and the thread record agrees
 * with its log. The keyspace is the engine's private business
 * (src/journal/keys.ts): `["thread", id]` holds the record and
 * `["entry", id, seq]` the entries, both JSON bytes. This is the one test
 * module that knows it.
 */
import type { KvStore } from "@floret/engine";

const decoder = new TextDecoder();
const decode = (bytes: Uint8Array): Record<string, unknown> => JSON.parse(decoder.decode(bytes));

/** The fields of a raw entry the checks read. */
export interface RawEntry {
  seq: number;
  turnId: string;
  kind: string;
  requestKey?: string;
  input?: { text?: string };
  callIds?: string[];
  dispatched?: string[];
  calls?: { callId: string; name: string }[];
  results?: { callId: string; status: string }[];
  outcome?: string;
  failure?: { code: string };
}

/** The fields of a raw thread record the checks read. */
export interface RawRecord {
  id: string;
  seq: number;
  status: string;
  active?: { turnId: string; owner?: string; leaseUntil?: number };
  queue: { id: string; requestKey: string; input: { text?: string } }[];
  lastTurn?: { turnId: string; outcome?: string };
}

/** One thread as stored. */
export interface RawThread {
  record: RawRecord;
  entries: RawEntry[];
}

/** Reads the record and the thread's own log (a fork's base path is not followed). */
export async function readThread(store: KvStore, threadId: string): Promise<RawThread> {
  const [recordEntry] = await store.getMany([["thread", threadId]]);
  if (!recordEntry) throw new Error(`No record for ${threadId}`);
  const listed = await store.list({ prefix: ["entry", threadId] });
  const entries = listed.map((item) => {
    const value = decode(item.value) as unknown as RawEntry;
    if (item.key[2] !== value.seq) {
      throw new Error(`Key seq ${String(item.key[2])} holds entry seq ${value.seq}`);
    }
    return value;
  });
  return { record: decode(recordEntry.value) as unknown as RawRecord, entries };
}

/** The ids of every thread in the store. */
export async function listThreadIds(store: KvStore): Promise<string[]> {
  const records = await store.list({ prefix: ["thread"] });
  return records.map((item) => String(item.key[1]));
}

/**
 * Every way the stored thread breaks the journal's invariants, as messages
 * (empty when it is sound): seqs run 1..n without a gap; the record's seq is
 * n, or less only by entries its active turn's run appended; each turn opens with `turn_started`, its entries are contiguous, and
 * nothing of it follows its `turn_ended`; only the last turn may be open, and
 * it is open exactly when the record names it active; an active marker
 * exists exactly when the record has an active turn.
 */
export async function journalViolations(store: KvStore, threadId: string): Promise<string[]> {
  const { record, entries } = await readThread(store, threadId);
  const problems: string[] = [];
  const at = (text: string): void => void problems.push(`${threadId}: ${text}`);
  entries.forEach((entry, i) => {
    if (entry.seq !== i + 1) at(`seq ${entry.seq} at position ${i + 1}`);
  });
  // The run that owns the active turn appends without rewriting the record
  // (checked against its version); anyone else's write, and every turn end, rewrites it.
  const appended = entries.slice(record.seq);
  if (record.seq > entries.length) at(`record seq ${record.seq} but ${entries.length} entries`);
  for (const entry of appended) {
    if (entry.turnId !== record.active?.turnId) {
      at(`seq ${entry.seq} past the record's seq ${record.seq} outside the active turn`);
    }
  }
  const ended = new Set<string>();
  let open: string | undefined;
  for (const entry of entries) {
    if (ended.has(entry.turnId)) at(`seq ${entry.seq} (${entry.kind}) after its turn ended`);
    if (entry.kind === "turn_started") {
      if (open !== undefined) at(`turn ${entry.turnId} started while ${open} was open`);
      open = entry.turnId;
    } else if (entry.turnId !== open) {
      at(`seq ${entry.seq} (${entry.kind}) of ${entry.turnId} outside its turn (open: ${open})`);
    }
    if (entry.kind === "turn_ended") {
      ended.add(entry.turnId);
      open = undefined;
    }
  }
  if (open !== record.active?.turnId) {
    at(`open turn ${open} but the record's active turn is ${record.active?.turnId}`);
  }
  const [marker] = await store.getMany([["active", threadId]]);
  if ((marker !== null) !== (record.active !== undefined)) {
    at(`active marker ${marker ? "present" : "absent"}, active turn ${record.active?.turnId}`);
  }
  return problems;
}

/** Request keys of the admitted turns and queued inputs, with how often each appears. */
export function requestKeyCounts(thread: RawThread): Map<string, number> {
  const counts = new Map<string, number>();
  const add = (key: string): void => void counts.set(key, (counts.get(key) ?? 0) + 1);
  for (const entry of thread.entries) {
    // Retries reuse their source's input and carry their own key; they are not sends.
    if (entry.kind === "turn_started" && entry.input && entry.requestKey) add(entry.requestKey);
  }
  for (const item of thread.record.queue) add(item.requestKey);
  return counts;
}

/** Tool results by status over the thread's log. */
export function resultStatuses(thread: RawThread): Map<string, string> {
  const statuses = new Map<string, string>();
  for (const entry of thread.entries) {
    for (const result of entry.results ?? []) statuses.set(result.callId, result.status);
  }
  return statuses;
}

/** Calls whose dispatch marker is committed (their side effect may have started). */
export function dispatchedCalls(thread: RawThread): Set<string> {
  const calls = new Set<string>();
  for (const entry of thread.entries) {
    for (const id of entry.dispatched ?? []) calls.add(id);
    for (const id of entry.callIds ?? []) calls.add(id);
  }
  return calls;
}
