import { test } from "node:test";
import assert from "node:assert/strict";
import { memoryStore } from "@floret/engine";
import { kvConformance } from "@floret/engine/testing";

kvConformance("memoryStore", () => memoryStore());

test("memoryStore keeps order across thousands of inserts and deletes (its index splits and merges chunks)", async () => {
  const store = memoryStore();
  const present = new Set<number>();
  let seed = 42;
  const random = (): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const value = new Uint8Array([1]);
  for (let round = 0; round < 40; round++) {
    const set = Array.from({ length: 150 }, () => Math.floor(random() * 5000));
    const del = [...present].filter(() => random() < 0.3).slice(0, 60);
    await store.commit({
      set: [...new Set(set)].filter((n) => !del.includes(n)).map((n) => ({ key: ["k", n], value })),
    });
    await store.commit({ delete: del.map((n) => ["k", n]) });
    for (const n of set) present.add(n);
    for (const n of del) present.delete(n);
  }
  const expected = [...present].sort((a, b) => a - b);
  assert.ok(expected.length > 1500);
  const listed = (await store.list({ prefix: ["k"] })).map((entry) => entry.key[1]);
  assert.deepEqual(listed, expected);
  const reversed = (await store.list({ prefix: ["k"] }, { reverse: true })).map((entry) =>
    entry.key[1]
  );
  assert.deepEqual(reversed, [...expected].reverse());
  const middle = expected[Math.floor(expected.length / 2)];
  const page = await store.list({ start: ["k", middle], end: ["k", 5000] }, { limit: 700 });
  assert.deepEqual(
    page.map((entry) => entry.key[1]),
    expected.filter((n) => n >= middle).slice(0, 700),
  );
  const before = await store.list({ start: ["k", 0], end: ["k", middle] }, {
    reverse: true,
    limit: 600,
  });
  assert.deepEqual(
    before.map((entry) => entry.key[1]),
    expected.filter((n) => n < middle).reverse().slice(0, 600),
  );
  await store.close();
});
