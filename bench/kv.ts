// Storage throughput: sequential commits per second (1 and 10 keys per
// commit, 100-byte values), commits per second from 200 concurrent writers
// (each commit checks the writer's own record version and sets it plus one
// entry, like an engine thread's step), and listing throughput (entries per
// second, full prefix scans and pages of 100) for every KvStore adapter.
// Run: npx tsx bench/kv.ts [--quick]
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
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
  cpu1: number;
  commit10: number;
  concurrent: number;
  cpuConcurrent: number;
  listAll: number;
  listPaged: number;
}

// CPU microseconds (user + system) of this process per operation of the last
// `rate` or `concurrentRate` call: on a shared machine it moves far less with
// other processes' load than wall time does (it misses time spent waiting for
// fsync, which the commits/s columns include).
let lastCpuUs = 0;

async function rate(count: number, body: (i: number) => Promise<void>): Promise<number> {
  const cpu = process.cpuUsage();
  const start = performance.now();
  for (let i = 0; i < count; i++) await body(i);
  const used = process.cpuUsage(cpu);
  lastCpuUs = (used.user + used.system) / count;
  return count / ((performance.now() - start) / 1000);
}

async function measure(adapter: string, open: () => KvStore, commits: number): Promise<Row> {
  const store = open();
  await store.getMany([["warm-up"]]);
  const commit1 = await rate(commits, async (i) => {
    const result = await store.commit({ set: [{ key: ["one", i], value: VALUE }] });
    if (!result.ok) throw new Error("commit failed");
  });
  const cpu1 = lastCpuUs;
  const commit10 = await rate(commits, async (i) => {
    const set = Array.from({ length: 10 }, (_, j) => ({ key: ["ten", i, j], value: VALUE }));
    const result = await store.commit({ set });
    if (!result.ok) throw new Error("commit failed");
  });
  const concurrent = await concurrentRate(store, commits);
  const cpuConcurrent = lastCpuUs;
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
  return { adapter, commit1, cpu1, commit10, concurrent, cpuConcurrent, listAll, listPaged };
}

const WRITERS = 200;

// Every writer commits in turn with a check on its own record, as the engine's
// threads do; the total is `commits` (rounded up to a multiple of WRITERS).
async function concurrentRate(store: KvStore, commits: number): Promise<number> {
  const each = Math.ceil(commits / WRITERS);
  const cpu = process.cpuUsage();
  const start = performance.now();
  await Promise.all(Array.from({ length: WRITERS }, async (_, w) => {
    let version: string | null = null;
    for (let i = 0; i < each; i++) {
      const result = await store.commit({
        checks: [{ key: ["conc", w], version }],
        set: [{ key: ["conc", w], value: VALUE }, { key: ["conc", w, i], value: VALUE }],
      });
      if (!result.ok) throw new Error("concurrent commit failed its own check");
      version = result.version;
    }
  }));
  const seconds = (performance.now() - start) / 1000;
  const used = process.cpuUsage(cpu);
  lastCpuUs = (used.user + used.system) / (each * WRITERS);
  return (each * WRITERS) / seconds;
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

const fmt = (value: number, width: number): string =>
  Math.round(value).toLocaleString("en-US").padStart(width);
const load = existsSync("/proc/loadavg")
  ? readFileSync("/proc/loadavg", "utf8").split(" ")[0]
  : "?";
console.log(
  `runtime: node ${process.version}, ${LIST_KEYS} keys listed, 100-byte values, ` +
    `1-min load at the end ${load}`,
);
console.log(
  `${"adapter".padEnd(36)}${"commits/s 1 key".padStart(16)}${"cpu us".padStart(8)}` +
    `${"commits/s 10 keys".padStart(18)}${"200 writers /s".padStart(16)}${"cpu us".padStart(8)}` +
    `${"list entries/s".padStart(16)}${"paged (100) /s".padStart(16)}`,
);
for (const row of rows) {
  console.log(
    `${row.adapter.padEnd(36)}${fmt(row.commit1, 16)}${fmt(row.cpu1, 8)}` +
      `${fmt(row.commit10, 18)}${fmt(row.concurrent, 16)}` +
      `${fmt(row.cpuConcurrent, 8)}` +
      `${fmt(row.listAll, 16)}${fmt(row.listPaged, 16)}`,
  );
}
