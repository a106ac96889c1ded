/**
 * Heap retained per N=10 conversation on the memory store, round 8: 600
 * conversations to pass the host's 512 cached idle actors, then 1,000 more,
 * heap used after two forced GCs before and after, divided by 1,000 (the
 * store's new rows plus the actors that replace evicted ones).
 *
 * Run: `node --expose-gc --import tsx bench/archive/2026-12-02-commit8/retained.ts <checkout>`
 * (a checkout's absolute path, e.g. a `git archive` copy with node_modules linked).
 *
 * @module
 */
const dir = process.argv[2];
const collect = (): void => {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error("run with --expose-gc");
  gc();
  gc();
};
const { memoryStore, openHost } = await import(dir + "/mod.ts");
const { USER_PROMPT } = await import(dir + "/bench/lib/script.mjs");
const { counterAgent } = await import(dir + "/bench/lib/workload.ts");
const store = memoryStore();
const host = await openHost({ store });
const threads = host.threads({ agent: counterAgent("counter", 10) });
const run = async (n: number, tag: string) => {
  for (let i = 0; i < n; i++) {
    const { threadId } = await threads.create({ requestKey: `${tag}${i}:c` });
    await threads.send({ threadId, requestKey: `${tag}${i}:s`, input: { text: USER_PROMPT } });
    await threads.waitForIdle(threadId);
  }
};
await run(600, "w"); // past the 512 idle actors: later conversations evict earlier actors
collect();
const before = process.memoryUsage().heapUsed;
const t0 = performance.now();
await run(1000, "m");
const t1 = performance.now();
collect();
const after = process.memoryUsage().heapUsed;
console.log(
  `${dir.split("/").pop()}: ${((after - before) / 1000 / 1024).toFixed(1)} KiB retained per N=10 ` +
    `conversation, ${((t1 - t0) / 10).toFixed(1)} us/step (one run, not an A/B)`,
);
await host.shutdown();
