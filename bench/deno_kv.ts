// Deno KV next to the other stores, all on Deno: raw KvStore throughput
// (sequential commits of 1 and 10 keys with 100-byte values, full listings),
// a 5 MiB value written and read back (chunked on Deno KV), and the engine's
// time per tool step (the overhead workload's scripted `add` conversation).
// Run: node_modules/.bin/deno run -A bench/deno_kv.ts [--quick]
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defineAgent, type KvStore, memoryStore, openHost } from "@floret/engine";
import { denoKvStore } from "@floret/engine/deno-kv";
import { libsqlStore } from "@floret/engine/libsql";
import { addTool, scriptedAddGateway, summarize } from "./lib/workload.ts";

const deno = (globalThis as { Deno?: { openKv(path: string): Promise<unknown> } }).Deno;
if (!deno) throw new Error("Run this with Deno: it measures Deno KV");
const quick = process.argv.includes("--quick");
const COMMITS = quick ? 200 : 1000;
const LIST_KEYS = quick ? 1000 : 5000;
const STEPS = 20;
const CONVERSATIONS = quick ? 5 : 20;
const VALUE = new Uint8Array(100).fill(7);

const dir = mkdtempSync(join(tmpdir(), "floret-bench-denokv-"));
let files = 0;
const stores: [string, () => Promise<KvStore>][] = [
  ["memory", () => Promise.resolve(memoryStore())],
  [
    "libSQL file (synchronous=full)",
    () => Promise.resolve(libsqlStore({ url: `file:${join(dir, `l${++files}.db`)}` })),
  ],
  [
    "Deno KV file",
    async () => denoKvStore(await deno.openKv(join(dir, `d${++files}.kv`)), { closeKv: true }),
  ],
  ["Deno KV :memory:", async () => denoKvStore(await deno.openKv(":memory:"), { closeKv: true })],
];

async function perSecond(count: number, body: (i: number) => Promise<unknown>): Promise<number> {
  const start = performance.now();
  for (let i = 0; i < count; i++) await body(i);
  return count / ((performance.now() - start) / 1000);
}

async function throughput(store: KvStore): Promise<number[]> {
  const commit1 = await perSecond(
    COMMITS,
    (i) => store.commit({ set: [{ key: ["one", i], value: VALUE }] }),
  );
  const commit10 = await perSecond(COMMITS, (i) =>
    store.commit({
      set: Array.from({ length: 10 }, (_, j) => ({ key: ["ten", i, j], value: VALUE })),
    }));
  for (let i = 0; i < LIST_KEYS; i += 100) {
    await store.commit({
      set: Array.from({ length: 100 }, (_, j) => ({ key: ["list", i + j], value: VALUE })),
    });
  }
  const listAll = LIST_KEYS * await perSecond(5, async () => {
    if ((await store.list({ prefix: ["list"] })).length !== LIST_KEYS) throw new Error("short");
  });
  return [commit1, commit10, listAll];
}

async function largeValue(store: KvStore): Promise<number[]> {
  const big = new Uint8Array(5 * 1024 * 1024).map((_, i) => i % 251);
  let start = performance.now();
  await store.commit({ set: [{ key: ["big"], value: big }] });
  const write = performance.now() - start;
  start = performance.now();
  const [entry] = await store.getMany([["big"]]);
  const read = performance.now() - start;
  if (entry?.value.length !== big.length) throw new Error("large value lost");
  return [write, read];
}

async function stepMicros(store: KvStore): Promise<number> {
  const host = await openHost({ store });
  const threads = host.threads({
    agent: defineAgent({
      id: "bench",
      systemPrompt: "s",
      gateway: scriptedAddGateway(STEPS),
      tools: [addTool],
      maxSteps: STEPS + 1,
    }),
  });
  const samples: number[] = [];
  for (let c = 0; c < CONVERSATIONS + 2; c++) {
    const start = performance.now();
    const { threadId } = await threads.create({ requestKey: `c${c}` });
    await threads.send({ threadId, requestKey: `s${c}`, input: { text: "0" } });
    const view = await threads.waitForIdle(threadId);
    if (summarize(view).toolResults !== STEPS) throw new Error("conversation incomplete");
    if (c >= 2) samples.push(((performance.now() - start) * 1000) / STEPS); // 2 warm-ups
  }
  await host.shutdown();
  samples.sort((a, b) => a - b);
  return samples[Math.floor(samples.length / 2)];
}

const fmt = (value: number, width: number): string =>
  Math.round(value).toLocaleString("en-US").padStart(width);
console.log(
  `deno ${process.versions.deno}; ${COMMITS} commits, ${LIST_KEYS} keys listed, ` +
    `${CONVERSATIONS} conversations of ${STEPS} tool steps (median)`,
);
console.log(
  `${"store".padEnd(32)}${"commits/s 1 key".padStart(16)}${"commits/s 10".padStart(14)}` +
    `${"list/s".padStart(12)}${"5MiB w ms".padStart(11)}${"5MiB r ms".padStart(11)}` +
    `${"µs/step".padStart(10)}`,
);
try {
  for (const [name, open] of stores) {
    let store = await open();
    const rates = await throughput(store);
    const [write, read] = await largeValue(store);
    await store.close();
    store = await open();
    const step = await stepMicros(store);
    console.log(
      `${name.padEnd(32)}${fmt(rates[0], 16)}${fmt(rates[1], 14)}${fmt(rates[2], 12)}` +
        `${fmt(write, 11)}${fmt(read, 11)}${fmt(step, 10)}`,
    );
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
