// Storage throughput: sequential commits per second (1 and 10 keys per
// commit, 100-byte values) and listing throughput (entries per second, full
// prefix scans and pages of 100) for every KvStore adapter.
// Run: npx tsx bench/kv.ts [--quick]
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type KvStore, memoryStore } from "@floret/engine";
import { libsqlStore } from "@floret/engine/libsql";
import { startHranaServer } from "../tests/support/hrana_server.ts";

const quick = process.argv.includes("--quick");
const VALUE = new Uint8Array(100).fill(7);
const LIST_KEYS = quick ? 1000 : 5000;

interface Row {
  adapter: string;
  commit1: number;
  commit10: number;
  listAll: number;
  listPaged: number;
}

async function rate(count: number, body: (i: number) => Promise<void>): Promise<number> {
  const start = performance.now();
  for (let i = 0; i < count; i++) await body(i);
  return count / ((performance.now() - start) / 1000);
}

async function measure(adapter: string, open: () => KvStore, commits: number): Promise<Row> {
  const store = open();
  await store.getMany([["warm-up"]]);
  const commit1 = await rate(commits, async (i) => {
    const result = await store.commit({ set: [{ key: ["one", i], value: VALUE }] });
    if (!result.ok) throw new Error("commit failed");
  });
  const commit10 = await rate(commits, async (i) => {
    const set = Array.from({ length: 10 }, (_, j) => ({ key: ["ten", i, j], value: VALUE }));
    const result = await store.commit({ set });
    if (!result.ok) throw new Error("commit failed");
  });
  for (let i = 0; i < LIST_KEYS; i += 100) {
    const set = Array.from({ length: 100 }, (_, j) => ({ key: ["list", i + j], value: VALUE }));
    await store.commit({ set });
  }
  const scans = quick ? 3 : 10;
  const listAll = LIST_KEYS * await rate(scans, async () => {
    const entries = await store.list({ prefix: ["list"] });
    if (entries.length !== LIST_KEYS) throw new Error("short listing");
  });
  const pages = LIST_KEYS / 100;
  const listPaged = LIST_KEYS * await rate(scans, async () => {
    let after: readonly (string | number)[] | undefined;
    for (let p = 0; p < pages; p++) {
      const page = await store.list({ prefix: ["list"] }, { limit: 100, after });
      after = page[page.length - 1].key as (string | number)[];
    }
  });
  await store.close();
  return { adapter, commit1, commit10, listAll, listPaged };
}

const dir = mkdtempSync(join(tmpdir(), "floret-bench-"));
const server = await startHranaServer(join(dir, "remote"));
const n = quick ? 200 : 1000;
const rows: Row[] = [];
try {
  rows.push(await measure("memory", () => memoryStore(), n * 5));
  rows.push(
    await measure(
      "libSQL file (synchronous=full)",
      () => libsqlStore({ url: `file:${join(dir, "full.db")}` }),
      n,
    ),
  );
  rows.push(
    await measure(
      "libSQL file (synchronous=normal)",
      () => libsqlStore({ url: `file:${join(dir, "normal.db")}`, synchronous: "normal" }),
      n,
    ),
  );
  rows.push(
    await measure(
      "libSQL HTTP loopback (test server)",
      () => libsqlStore({ url: server.newDatabaseUrl() }),
      n,
    ),
  );
} finally {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
}

const fmt = (value: number): string => Math.round(value).toLocaleString("en-US").padStart(12);
console.log(`runtime: node ${process.version}, ${LIST_KEYS} keys listed, 100-byte values`);
console.log(
  `${"adapter".padEnd(36)}${"commits/s 1 key".padStart(16)}${"commits/s 10 keys".padStart(18)}` +
    `${"list entries/s".padStart(16)}${"paged (100) /s".padStart(16)}`,
);
for (const row of rows) {
  console.log(
    `${row.adapter.padEnd(36)}${fmt(row.commit1).padStart(16)}${fmt(row.commit10).padStart(18)}` +
      `${fmt(row.listAll).padStart(16)}${fmt(row.listPaged).padStart(16)}`,
  );
}
