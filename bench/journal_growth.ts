/**
 * Does the cost of a step grow with history? And what does an idle thread cost
 * in memory?
 *
 * 1. Bytes per step: a wrapper around the store counts the bytes of keys
 *    (encoded, as adapters store them) and values passed to `commit`, and the
 *    bytes read back by `getMany`/`list`, attributed to the model call they
 *    follow. Two shapes: one thread with 500 turns of one `add` step each
 *    (turn 10 vs turn 500), and one turn of 500 steps (step 10 vs step 500).
 * 2. Time per turn at turn 6–25 and at the last 20 of 500 turns of one
 *    thread, on memoryStore and on libSQL (NORMAL and FULL).
 * 3. Memory per idle thread: 1,000 threads, each with one short completed
 *    turn (the model answers `done` at once); heap and RSS after a forced GC,
 *    per thread, at 500 and at 1,000 threads, on memoryStore (journal in the
 *    heap) and on libsqlStore (journal on disk, so only the engine's state).
 *
 * Run: `node --expose-gc --import tsx bench/journal_growth.ts [--quick] [--timed=memory]
 * [--turns=500]` (without `--expose-gc` memory figures include uncollected garbage;
 * `--turns` sets the length of the timed thread with `--timed`, to see whether the
 * ratio trends with history or only scatters).
 *
 * @module
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type KvEntry, type KvStore, memoryStore, openHost } from "@floret/engine";
import { libsqlStore } from "@floret/engine/libsql";
import { encodeKey } from "../src/spi/key_codec.ts";
import { counters, USER_PROMPT } from "./lib/script.mjs";
import { counterAgent, summarize } from "./lib/workload.ts";

const quick = process.argv.includes("--quick");
const gc = (globalThis as { gc?: () => void }).gc;

/** Store traffic attributed to one model call (the step that call starts). */
interface Traffic {
  commits: number;
  commitBytes: number;
  sets: number;
  reads: number;
  readBytes: number;
}

/** Wraps a store; `traffic[k]` is what happened after the k-th model call of the process. */
function countingStore(inner: KvStore): { store: KvStore; traffic: Map<number, Traffic> } {
  const traffic = new Map<number, Traffic>();
  const slot = (): Traffic => {
    let t = traffic.get(counters.modelCalls);
    if (!t) {
      t = { commits: 0, commitBytes: 0, sets: 0, reads: 0, readBytes: 0 };
      traffic.set(counters.modelCalls, t);
    }
    return t;
  };
  const readCost = (entries: (KvEntry | null)[]): void => {
    const t = slot();
    t.reads += entries.length;
    for (const e of entries) if (e) t.readBytes += encodeKey(e.key).length + e.value.length;
  };
  const store: KvStore = {
    async getMany(keys) {
      const out = await inner.getMany(keys);
      readCost(out);
      return out;
    },
    async list(selector, options) {
      const out = await inner.list(selector, options);
      readCost(out);
      return out;
    },
    commit(op) {
      const t = slot();
      t.commits++;
      for (const c of op.checks ?? []) t.commitBytes += encodeKey(c.key).length;
      for (const s of op.set ?? []) {
        t.sets++;
        t.commitBytes += encodeKey(s.key).length + s.value.length;
      }
      for (const d of op.delete ?? []) t.commitBytes += encodeKey(d).length;
      return inner.commit(op);
    },
    close: () => inner.close(),
  };
  return { store, traffic };
}

const sum = (ts: Traffic[]): Traffic =>
  ts.reduce((a, t) => ({
    commits: a.commits + t.commits,
    commitBytes: a.commitBytes + t.commitBytes,
    sets: a.sets + t.sets,
    reads: a.reads + t.reads,
    readBytes: a.readBytes + t.readBytes,
  }), { commits: 0, commitBytes: 0, sets: 0, reads: 0, readBytes: 0 });

async function manyTurns(turns: number): Promise<void> {
  const { store, traffic } = countingStore(memoryStore());
  const host = await openHost({ store });
  const threads = host.threads({
    agent: counterAgent("growth", 1),
  });
  const { threadId } = await threads.create({ requestKey: "growth:create" });
  const report = new Set([1, 10, 100, turns]);
  for (let turn = 1; turn <= turns; turn++) {
    const before = counters.modelCalls;
    const t0 = performance.now();
    await threads.send({
      threadId,
      requestKey: `growth:send:${turn}`,
      input: { text: USER_PROMPT },
    });
    const view = await threads.waitForIdle(threadId);
    const ms = performance.now() - t0;
    if (report.has(turn)) {
      const r = summarize(view);
      // traffic[before] = admission (before the first model call); then one
      // slot per model call: the step (tool call + result), then the final answer.
      const admission = traffic.get(before);
      const step = traffic.get(before + 1);
      const final = traffic.get(before + 2);
      console.log(
        `turn ${turn}: ${r.toolResults} tool items, ${view.items.length} items in view; ` +
          `admission ${JSON.stringify(admission)}; step ${JSON.stringify(step)}; final ${
            JSON.stringify(final)
          }; ` +
          `wall ${ms.toFixed(2)} ms`,
      );
    }
  }
  await host.shutdown();
  await store.close();
}

async function longTurn(n: number): Promise<void> {
  const { store, traffic } = countingStore(memoryStore());
  const host = await openHost({ store });
  const threads = host.threads({
    agent: counterAgent("long-turn", n),
  });
  const { threadId } = await threads.create({ requestKey: "long:create" });
  const before = counters.modelCalls;
  await threads.send({ threadId, requestKey: "long:send", input: { text: USER_PROMPT } });
  const r = summarize(await threads.waitForIdle(threadId));
  if (r.finalText !== "done" || r.toolResults !== n) {
    throw new Error(`long turn failed: ${JSON.stringify(r)}`);
  }
  for (const k of [1, 10, 100, n]) {
    console.log(`one turn of ${n} steps, step ${k}: ${JSON.stringify(traffic.get(before + k))}`);
  }
  const steps = sum([...Array(n).keys()].map((i) => traffic.get(before + 1 + i)!));
  console.log(`  mean over its ${n} steps: ${(steps.commitBytes / n).toFixed(0)} B committed/step`);
  await host.shutdown();
  await store.close();
}

const median = (xs: number[]): number => {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

/**
 * Wall time per turn (send, one `add` step, the final answer, waitForIdle) on
 * one thread of `turns` turns: the median of turns 6–25 against the median of
 * the last 20, and what `waitForIdle` alone costs on the idle thread at both
 * points (it copies the whole view, so it is the part that may grow).
 */
async function timedTurns(
  kind: "memory" | "libsql-normal" | "libsql",
  turns: number,
  print = true,
): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "floret-timed-"));
  const store = kind === "memory" ? memoryStore() : libsqlStore({
    url: `file:${join(dir, "timed.db")}`,
    synchronous: kind === "libsql" ? "full" : "normal",
  });
  const host = await openHost({ store });
  const threads = host.threads({
    agent: counterAgent("timed", 1),
  });
  const { threadId } = await threads.create({ requestKey: "timed:create" });
  const wall: number[] = [];
  const idleView = new Map<number, number>();
  for (let turn = 1; turn <= turns; turn++) {
    const t0 = performance.now();
    await threads.send({ threadId, requestKey: `timed:${turn}`, input: { text: USER_PROMPT } });
    const view = await threads.waitForIdle(threadId);
    wall.push(performance.now() - t0);
    if (summarize(view).finalText !== "done") throw new Error(`turn ${turn} failed`);
    if (turn === 25 || turn === turns) {
      const t1 = performance.now();
      for (let i = 0; i < 20; i++) await threads.waitForIdle(threadId);
      idleView.set(turn, (performance.now() - t1) / 20);
    }
  }
  const early = median(wall.slice(5, 25));
  const late = median(wall.slice(-20));
  const us = (ms: number): string => (ms * 1000).toFixed(0);
  if (print) {
    console.log(
      `${kind}: µs per turn (2 model calls, 1 tool step), median of turns 6-25: ${us(early)}, ` +
        `of turns ${turns - 19}-${turns}: ${us(late)} (${(late / early).toFixed(2)}×); ` +
        `waitForIdle on the idle thread at turn 25: ${us(idleView.get(25)!)} µs, ` +
        `at turn ${turns}: ${us(idleView.get(turns)!)} µs`,
    );
  }
  await host.shutdown();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
}

function memory(): { heap: number; rss: number } {
  gc?.();
  gc?.();
  const m = process.memoryUsage();
  return { heap: m.heapUsed, rss: m.rss };
}

async function idleThreads(kind: "memory" | "libsql", count: number): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "floret-idle-"));
  const store = kind === "memory"
    ? memoryStore()
    : libsqlStore({ url: `file:${join(dir, "idle.db")}`, synchronous: "normal" });
  const host = await openHost({ store });
  const threads = host.threads({
    agent: counterAgent("idle", 0),
  });
  const turn = async (key: string): Promise<void> => {
    const { threadId } = await threads.create({ requestKey: `${key}:create` });
    await threads.send({ threadId, requestKey: `${key}:send`, input: { text: USER_PROMPT } });
    const r = summarize(await threads.waitForIdle(threadId));
    if (r.finalText !== "done") throw new Error(`idle thread turn failed: ${JSON.stringify(r)}`);
  };
  for (let i = 0; i < 50; i++) await turn(`${kind}:warm:${i}`); // JIT and pools
  const base = memory();
  const mib = (x: number): string => (x / 1048576).toFixed(1);
  for (let i = 1; i <= count; i++) {
    await turn(`${kind}:idle:${i}`);
    if (i === count / 2 || i === count) {
      const m = memory();
      console.log(
        `${kind}: ${i} idle threads: heap +${mib(m.heap - base.heap)} MiB ` +
          `(${((m.heap - base.heap) / i).toFixed(0)} B/thread), rss +${
            mib(m.rss - base.rss)
          } MiB ` +
          `(${((m.rss - base.rss) / i).toFixed(0)} B/thread)`,
      );
    }
  }
  await host.shutdown();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
}

console.log(
  `node ${process.version}, gc ${
    gc ? "forced (--expose-gc)" : "NOT available: memory figures include garbage"
  }`,
);
// `--timed=memory` (or `libsql-normal`, `libsql`) runs only that store's timed turns,
// so before/after comparisons can interleave short runs. A discarded 500-turn
// thread warms the JIT first, as the full run's earlier sections do.
const timedOnly = process.argv.find((a) => a.startsWith("--timed="))?.slice("--timed=".length);
if (timedOnly !== undefined) {
  if (timedOnly !== "memory" && timedOnly !== "libsql-normal" && timedOnly !== "libsql") {
    throw new Error(`--timed= takes memory, libsql-normal or libsql, not ${timedOnly}`);
  }
  const turnsArg = process.argv.find((a) => a.startsWith("--turns="))?.slice("--turns=".length);
  const turns = turnsArg === undefined ? (quick ? 60 : 500) : Number(turnsArg);
  if (!Number.isInteger(turns) || turns < 25) throw new Error("--turns= takes an integer >= 25");
  // The warm-up thread stays at 500 turns, so runs of any length warm alike.
  await timedTurns(timedOnly, quick ? 60 : 500, false);
  await timedTurns(timedOnly, turns);
} else {
  await manyTurns(quick ? 50 : 500);
  await longTurn(quick ? 100 : 500);
  for (const kind of ["memory", "libsql-normal", "libsql"] as const) {
    await timedTurns(kind, quick ? 60 : 500);
  }
  await idleThreads("memory", quick ? 200 : 1000);
  await idleThreads("libsql", quick ? 200 : 1000);
}
