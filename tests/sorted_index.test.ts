// The memory store's ordered key index: whatever the order of inserts and
// removes (appends in sequence, as a thread's entries come, or scattered), it
// must list exactly a sorted model's ids, forwards, backwards and by range.
import { test } from "node:test";
import assert from "node:assert/strict";
import { SortedIndex } from "../adapters/storage/sorted_index.ts";

/** A small deterministic generator (xorshift), so a failure can be replayed. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 2 ** 32;
  };
}

function check(index: SortedIndex, model: Set<string>): void {
  const sorted = [...model].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  assert.deepEqual([...index.range("", "\uffff", false)], sorted);
  assert.deepEqual([...index.range("", "\uffff", true)], sorted.slice().reverse());
  if (sorted.length > 2) {
    const lower = sorted[1];
    const upper = sorted[sorted.length - 1];
    assert.deepEqual([...index.range(lower, upper, false)], sorted.slice(1, -1));
  }
}

test("sequential appends under many prefixes, with scattered inserts and removes, keep the order", () => {
  const next = random(7);
  const index = new SortedIndex();
  const model = new Set<string>();
  const seqs = new Map<string, number>();
  const put = (id: string): void => {
    if (model.has(id)) return;
    model.add(id);
    index.insert(id);
  };
  for (let round = 0; round < 6000; round++) {
    const roll = next();
    const prefix = `p${Math.floor(next() * 40).toString().padStart(2, "0")}/`;
    if (roll < 0.6) {
      // The next id of a prefix: lands right after the previous one, across chunk ends too.
      const seq = (seqs.get(prefix) ?? 0) + 1;
      seqs.set(prefix, seq);
      put(prefix + String.fromCharCode(0x10, seq >>> 8, seq & 0xff));
      if (next() < 0.5) put(prefix + String.fromCharCode(0x10, (seq + 1) >>> 8, (seq + 1) & 0xff));
    } else if (roll < 0.8) {
      put(`${prefix}${next().toString(36)}`);
    } else {
      const ids = [...model];
      const id = ids[Math.floor(next() * ids.length)];
      if (id === undefined) continue;
      model.delete(id);
      index.remove(id);
    }
    if (round % 1000 === 999) check(index, model);
  }
  // Removing an absent id changes nothing.
  index.remove("absent");
  check(index, model);
  index.clear();
  check(index, new Set());
  index.insert("b");
  index.insert("c");
  index.insert("a");
  check(index, new Set(["a", "b", "c"]));
});

test("ids past the last one (markers whose time only grows) go to the end, across chunk splits", () => {
  const next = random(11);
  const index = new SortedIndex();
  const model = new Set<string>();
  for (let i = 0; i < 3000; i++) {
    // A growing id past every other, then one scattered below it: the hint never serves the next.
    const last = `u${i.toString().padStart(6, "0")}`;
    model.add(last);
    index.insert(last);
    const scattered = `e${next().toString(36)}`;
    if (!model.has(scattered)) {
      model.add(scattered);
      index.insert(scattered);
    }
    if (i % 7 === 0) {
      model.delete(last);
      index.remove(last);
    }
  }
  check(index, model);
});
