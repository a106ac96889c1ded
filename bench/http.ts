/**
 * What the HTTP layer costs: per-command time of `threadClient` over
 * `threadApi` (in-process `app.fetch`, no socket) against calling the
 * in-process service directly, and the delivery latency of a live update to an
 * in-process subscriber and to a remote (SSE) one.
 *
 * Commands: `view` (a query, one GET), `setTitle` (a mutation with a fresh
 * request key each time: one PATCH, one commit) and `list`. The thread holds
 * 20 items (10 finished turns). Rounds of ITERATIONS calls alternate direct and
 * remote; each figure is the median over RUNS rounds (after one warm-up round),
 * and the overhead is the median of the per-round differences.
 *
 * Latency: an in-process `setTitle` is started; the time until the subscriber
 * holds the batch carrying the new title, median of LATENCY_SAMPLES.
 *
 * Run: `npx tsx bench/http.ts` (or `deno run -A bench/http.ts`, `bun bench/http.ts`);
 * env ITERATIONS (500), RUNS (9), LATENCY_SAMPLES (200).
 *
 * @module
 */
import { defineAgent, memoryStore, openHost, type ThreadService } from "@floret/engine";
import { threadApi, threadClient } from "@floret/engine/http";
import { scriptedGateway } from "@floret/engine/testing";

const env = (name: string, fallback: number): number =>
  Number((globalThis as { process?: { env: Record<string, string> } }).process?.env[name]) ||
  fallback;
const ITERATIONS = env("ITERATIONS", 500);
const RUNS = env("RUNS", 9);
const LATENCY_SAMPLES = env("LATENCY_SAMPLES", 200);

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
};

let keyCounter = 0;
const commands: Record<string, (s: ThreadService, threadId: string) => Promise<unknown>> = {
  view: (s, threadId) => s.view(threadId),
  setTitle: (s, threadId) =>
    s.setTitle({ threadId, requestKey: `k${keyCounter++}`, title: `t${keyCounter}` }),
  list: (s) => s.list({ limit: 10 }),
};

/**
 * Rounds alternate direct and remote calls, so both see the same machine load
 * (this machine is shared); the figure is the median over rounds of each.
 */
async function perCommandMicros(
  run: (s: ThreadService, threadId: string) => Promise<unknown>,
  threadId: string,
): Promise<{ direct: number; remote: number; overhead: number }> {
  const direct: number[] = [];
  const remote: number[] = [];
  const overhead: number[] = [];
  const round = async (service: ThreadService): Promise<number> => {
    const start = performance.now();
    for (let i = 0; i < ITERATIONS; i++) await run(service, threadId);
    return ((performance.now() - start) * 1000) / ITERATIONS;
  };
  for (let i = 0; i <= RUNS; i++) {
    const d = await round(directService);
    const r = await round(remoteService);
    if (i === 0) continue; // warm-up
    direct.push(d);
    remote.push(r);
    overhead.push(r - d);
  }
  return { direct: median(direct), remote: median(remote), overhead: median(overhead) };
}

async function latencyMicros(
  direct: ThreadService,
  watcher: ThreadService,
  threadId: string,
): Promise<number> {
  const controller = new AbortController();
  const updates = watcher.subscribe(threadId, { signal: controller.signal })[
    Symbol.asyncIterator
  ]();
  await watcher.view(threadId); // the remote subscription is registered once this returns
  const samples: number[] = [];
  for (let i = 0; i < LATENCY_SAMPLES + 20; i++) {
    const title = `latency ${i}`;
    const start = performance.now();
    void direct.setTitle({ threadId, requestKey: `lat${i}-${keyCounter++}`, title });
    for (;;) {
      const next = await updates.next();
      if (next.done) throw new Error("subscription ended");
      const update = next.value;
      if (
        update.type === "batch" &&
        update.ops.some((op) => op.op === "component" && op.name === "title" && op.value === title)
      ) break;
    }
    if (i >= 20) samples.push((performance.now() - start) * 1000);
  }
  controller.abort();
  return median(samples);
}

const steps = Array.from({ length: 10 }, (_, i) => ({ text: `answer ${i}` }));
const host = await openHost({ store: memoryStore() });
const directService = host.threads({
  agent: defineAgent({ id: "bench", systemPrompt: "s", gateway: scriptedGateway(steps) }),
});
const app = threadApi(directService, { authorize: () => true });
const remoteService = threadClient({ baseUrl: "http://127.0.0.1", fetch: app.fetch });
const direct = directService;
const { threadId } = await direct.create({ requestKey: "bench-thread" });
for (let i = 0; i < 10; i++) {
  await direct.send({ threadId, requestKey: `m${i}`, input: { text: `question ${i}` } });
  await direct.waitForIdle(threadId);
}

const runtime = "Deno" in globalThis ? "deno" : "Bun" in globalThis ? "bun" : "node";
console.log(
  `runtime ${runtime}; ${ITERATIONS} calls x ${RUNS} rounds per figure (median of rounds), ` +
    `thread of ${(await direct.view(threadId)).items.length} items`,
);
for (const [name, run] of Object.entries(commands)) {
  const figures = await perCommandMicros(run, threadId);
  console.log(
    `${name.padEnd(8)} direct ${figures.direct.toFixed(1)} µs  client+API ` +
      `${figures.remote.toFixed(1)} µs  overhead ${figures.overhead.toFixed(1)} µs per command`,
  );
}
const localLatency = await latencyMicros(direct, direct, threadId);
const remoteLatency = await latencyMicros(direct, remoteService, threadId);
console.log(
  `update delivery (median of ${LATENCY_SAMPLES}): in-process subscriber ` +
    `${localLatency.toFixed(1)} µs, SSE via threadClient ${remoteLatency.toFixed(1)} µs`,
);
await host.shutdown();
