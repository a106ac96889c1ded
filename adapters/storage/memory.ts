/**
 * The in-memory reference adapter of the {@link KvStore} SPI. It has no
 * dependencies and runs on every runtime; other adapters must behave exactly
 * like it under the shared conformance suite.
 *
 * @module
 */

import {
  bytesToMapKey,
  decodeKey,
  FloretError,
  formatVersion,
  planCommit,
  planGet,
  PLANNED_COMMIT,
  planScan,
} from "@floret/engine/spi";
import type {
  CommitPlan,
  DeferredJson,
  KvCommit,
  KvCommitResult,
  KvEntry,
  KvKey,
  KvListOptions,
  KvSelector,
  KvStore,
  OwnedCheck,
  OwnedPlan,
  OwnedWrite,
  PlannedCommitStore,
} from "@floret/engine/spi";
import { SortedIndex } from "./sorted_index.ts";

// The encoded key lives only as the map's binary-string id: keeping its bytes
// too would be one more object per stored key for the GC to copy and trace.
// A value committed through the journal's planned path is its JSON text (one
// string instead of a buffer per value), or a journal entry whose text is made
// at its first read (most entries are never read back), encoded to UTF-8 when read.
interface Slot {
  value: Uint8Array | string | DeferredJson;
  version: string;
}

const utf8 = new TextEncoder();

function closedError(): FloretError {
  return new FloretError("storage_failure", "Store is closed: memoryStore");
}

function idBytes(id: string): Uint8Array {
  const bytes = new Uint8Array(id.length);
  for (let i = 0; i < id.length; i++) bytes[i] = id.charCodeAt(i);
  return bytes;
}

function toEntry(id: string, slot: Slot): KvEntry {
  const stored = slot.value;
  let value: Uint8Array;
  if (typeof stored === "string") value = utf8.encode(stored);
  else if (stored instanceof Uint8Array) value = stored.slice();
  else {
    // Made once: the slot keeps the text from now on (and lets the entry go).
    const text = stored.json();
    slot.value = text;
    value = utf8.encode(text);
  }
  return { key: decodeKey(idBytes(id)), value, version: slot.version };
}

/**
 * Creates an empty in-memory store: a chunked sorted index of encoded keys plus a `Map`. Values
 * are copied on the way in and out, so callers never share buffers with it.
 * Contents vanish with the process; use it for tests and ephemeral hosts.
 *
 * @returns a fresh {@link KvStore}
 * @example
 * ```ts
 * import { memoryStore } from "@floret/engine";
 * const store = memoryStore();
 * await store.commit({ set: [{ key: ["greeting"], value: new TextEncoder().encode("hi") }] });
 * const [entry] = await store.getMany([["greeting"]]);
 * await store.close();
 * ```
 */
export function memoryStore(): KvStore {
  return memoryStoreWithPlannedPath();
}

// The store object, typed with the journal's internal fast path.
function memoryStoreWithPlannedPath(): PlannedCommitStore {
  const slots = new Map<string, Slot>();
  // Keys as binary strings, whose `<` is byte order.
  const sorted = new SortedIndex();
  // A number, not a bigint (no heap allocation per commit): exact up to 2^53
  // commits, which no process reaches.
  let counter = 0;
  let closed = false;

  // Every method runs synchronously inside its promise, so a commit's checks
  // and writes can never interleave with another call: that is the atomicity.
  const guard = <T>(work: () => T): Promise<T> => {
    try {
      if (closed) throw closedError();
      return Promise.resolve(work());
    } catch (error) {
      return Promise.reject(error);
    }
  };

  const put = (id: string, value: Uint8Array | string | DeferredJson, version: string): void => {
    // JSON.stringify's text is a rope (a tree of the builder's pieces) until something reads
    // it, and the store keeps it for good: reading one char flattens it now, so one string is
    // kept instead of several pieces (~390 instead of ~530 bytes for a 350-byte entry in V8),
    // and every scavenge until it is promoted copies one object, not seven.
    if (typeof value === "string") value.charCodeAt(0);
    // One map lookup, not a get and then a set: the size tells whether the key is new.
    // Readers got copies (toEntry), so a replaced slot is nobody's.
    const size = slots.size;
    slots.set(id, { value, version });
    if (slots.size !== size) sorted.insert(id);
  };

  const remove = (id: string): void => {
    if (!slots.delete(id)) return;
    sorted.remove(id);
  };

  const apply = (plan: CommitPlan | OwnedPlan): KvCommitResult => {
    // A planned key's map id is the planner's when it gave one (see OwnedWrite.id), else derived.
    for (const check of plan.checks) {
      const current = slots.get((check as OwnedCheck).id ?? bytesToMapKey(check.key))?.version ??
        null;
      if (current !== check.version) return { ok: false };
    }
    counter += 1;
    const version = formatVersion(counter);
    for (const write of plan.writes) {
      const id = (write as OwnedWrite).id ?? bytesToMapKey(write.key);
      if (write.value === null) remove(id);
      else put(id, write.value, version);
    }
    return { ok: true, version };
  };

  const commit = (op: KvCommit): Promise<KvCommitResult> => guard(() => apply(planCommit(op)));

  const getMany = (keys: readonly KvKey[]): Promise<(KvEntry | null)[]> =>
    guard(() =>
      planGet(keys).map((bytes) => {
        const id = bytesToMapKey(bytes);
        const slot = slots.get(id);
        return slot ? toEntry(id, slot) : null;
      })
    );

  return {
    getMany,

    list(selector: KvSelector, options?: KvListOptions): Promise<KvEntry[]> {
      return guard(() => {
        const scan = planScan(selector, options);
        if (scan.empty) return [];
        const out: KvEntry[] = [];
        for (
          const id of sorted.range(
            bytesToMapKey(scan.lower),
            bytesToMapKey(scan.upper),
            scan.reverse,
          )
        ) {
          if (out.length >= scan.limit) break;
          out.push(toEntry(id, slots.get(id) as Slot));
        }
        return out;
      });
    },

    commit,

    // The journal's plans are already validated and their values are its own
    // fresh text or buffers: no second planning pass, no defensive copy.
    // Synchronous: the journal resolves the step's commit without a promise chain.
    [PLANNED_COMMIT]: {
      commit,
      planned(plan: CommitPlan | OwnedPlan): KvCommitResult {
        if (closed) throw closedError();
        return apply(plan);
      },
      getMany,
      // A thread's version check (every waitForIdle) needs no entry built.
      version(key: KvKey): string | null {
        if (closed) throw closedError();
        return slots.get(bytesToMapKey(planGet([key])[0]))?.version ?? null;
      },
    },

    close(): Promise<void> {
      closed = true;
      slots.clear();
      sorted.clear();
      return Promise.resolve();
    },
  };
}
