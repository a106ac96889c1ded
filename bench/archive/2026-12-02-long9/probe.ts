/**
 * A quieter look at journal_growth.ts's `--timed=memory`: several 500-turn
 * threads per process on memoryStore (one after the other, each on its own
 * host), each turn timed in wall and in process CPU; the medians over every
 * thread of turns 6–25 and of turns 481–500 (one thread discarded first, for
 * the JIT). Same turn as journal_growth.ts: send, one `add` step, the final
 * answer, waitForIdle.
 *
 * Run from a checkout: `node --expose-gc --import tsx bench/archive/2026-12-02-long9/probe.ts [threads] [--no-read]`
 * Prints one `PROBE {json}` line.
 *
 * @module
 */
import { memoryStore, openHost } from "@floret/engine";
import { USER_PROMPT } from "../../lib/script.mjs";
import { counterAgent, summarize } from "../../lib/workload.ts";

const TURNS = 500;
const threadsPerRun = Number(process.argv[2] ?? 4);
// `--no-read`: the view's items are not read after each turn (a diagnostic: the
// benchmark's check copies the whole view, and that garbage lands in later turns).
const readView = !process.argv.includes("--no-read");

const median = (xs: number[]): number => {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

/** One thread of TURNS turns; per-turn wall and CPU in µs. */
async function oneThread(label: string): Promise<{ wall: number[]; cpu: number[] }> {
  const store = memoryStore();
  const host = await openHost({ store });
  const threads = host.threads({ agent: counterAgent("probe", 1) });
  const { threadId } = await threads.create({ requestKey: `${label}:create` });
  const wall: number[] = [];
  const cpu: number[] = [];
  for (let turn = 1; turn <= TURNS; turn++) {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    await threads.send({ threadId, requestKey: `${label}:${turn}`, input: { text: USER_PROMPT } });
    const view = await threads.waitForIdle(threadId);
    const t1 = performance.now();
    const c1 = process.cpuUsage(c0);
    wall.push((t1 - t0) * 1000);
    cpu.push(c1.user + c1.system);
    if (readView && summarize(view).finalText !== "done") throw new Error(`turn ${turn} failed`);
    if (view.status !== "idle") throw new Error(`turn ${turn} left the thread ${view.status}`);
  }
  await host.shutdown();
  await store.close();
  return { wall, cpu };
}

await oneThread("warm");
const early = { wall: [] as number[], cpu: [] as number[] };
const late = { wall: [] as number[], cpu: [] as number[] };
for (let t = 0; t < threadsPerRun; t++) {
  const { wall, cpu } = await oneThread(`t${t}`);
  early.wall.push(...wall.slice(5, 25));
  early.cpu.push(...cpu.slice(5, 25));
  late.wall.push(...wall.slice(-20));
  late.cpu.push(...cpu.slice(-20));
}
const r = (x: number): number => Math.round(x * 10) / 10;
const out = {
  threads: threadsPerRun,
  readView,
  wall10: r(median(early.wall)),
  wall500: r(median(late.wall)),
  cpu10: r(median(early.cpu)),
  cpu500: r(median(late.cpu)),
  wallRatio: Math.round((median(late.wall) / median(early.wall)) * 100) / 100,
  cpuRatio: Math.round((median(late.cpu) / median(early.cpu)) * 100) / 100,
};
console.log(`PROBE ${JSON.stringify(out)}`);
