// The public storage toolkit (`@floret/engine/spi`) is enough to build a
// store: a sorted-array store written here from its exports alone passes the
// shared conformance suite, and our own adapters import only that entry.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import {
  compareBytes,
  decodeKey,
  encodeKey,
  FloretError,
  formatVersion,
  inScan,
  isFloretError,
  type KvEntry,
  type KvStore,
  planCommit,
  planGet,
  planScan,
} from "@floret/engine/spi";
import { kvConformance } from "@floret/engine/testing";

interface Row {
  key: Uint8Array;
  value: Uint8Array;
  version: string;
}

/** The smallest store a third party could write: one sorted array, linear scans. */
function arrayStore(): KvStore {
  let rows: Row[] = [];
  let counter = 0;
  let closed = false;
  const entry = (row: Row): KvEntry => ({
    key: decodeKey(row.key),
    value: row.value.slice(),
    version: row.version,
  });
  const find = (key: Uint8Array): Row | undefined =>
    rows.find((row) => compareBytes(row.key, key) === 0);
  const open = async <T>(work: () => T): Promise<T> => {
    if (closed) throw new FloretError("storage_failure", "Store is closed: arrayStore");
    return await work();
  };
  return {
    getMany: (keys) =>
      open(() => planGet(keys).map((key) => find(key) ?? null).map((row) => row && entry(row))),
    list: (selector, options) =>
      open(() => {
        const scan = planScan(selector, options);
        const inRange = rows.filter((row) => inScan(scan, row.key));
        if (scan.reverse) inRange.reverse();
        return inRange.slice(0, scan.limit).map(entry);
      }),
    commit: (op) =>
      open(() => {
        const plan = planCommit(op);
        if (plan.checks.some((check) => (find(check.key)?.version ?? null) !== check.version)) {
          return { ok: false as const };
        }
        const version = formatVersion(++counter);
        for (const write of plan.writes) {
          rows = rows.filter((row) => compareBytes(row.key, write.key) !== 0);
          if (write.value) rows.push({ key: write.key, value: write.value, version });
        }
        rows.sort((a, b) => compareBytes(a.key, b.key));
        return { ok: true as const, version };
      }),
    close: () => {
      closed = true;
      return Promise.resolve();
    },
  };
}

kvConformance("a store built only on @floret/engine/spi", arrayStore, {
  largeValueBytes: 4 * 1024 * 1024,
  modelRuns: 10,
});

test("the key codec is order-preserving and round-trips", () => {
  const keys = [[new Uint8Array([0])], ["a"], ["a", 1], ["a\u0000"], ["b"], [-1], [2], [1n], [
    true,
  ]];
  const encoded = keys.map((key) => encodeKey(key));
  for (let i = 1; i < encoded.length; i++) assert.ok(compareBytes(encoded[i - 1], encoded[i]) < 0);
  assert.deepEqual(encoded.map(decodeKey), keys);
  assert.throws(() => encodeKey([NaN]), (e) => isFloretError(e, "invalid_input"));
});

test("our storage adapters import the toolkit only through its public entry", () => {
  const dir = fileURLToPath(new URL("../adapters/storage/", import.meta.url));
  const files = readdirSync(dir).filter((name) => name.endsWith(".ts"));
  assert.ok(files.length >= 3);
  for (const name of files) {
    const source = readFileSync(dir + name, "utf8");
    assert.doesNotMatch(source, /from\s+["'][./]*src\//, `${name} imports from src/`);
  }
});
