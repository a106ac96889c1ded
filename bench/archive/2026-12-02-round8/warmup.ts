/**
 * How the overhead workload's conversation (create + send + waitForIdle, the
 * scripted `add` agent, N=10) gets cheaper as V8 tiers the engine's code up:
 * 3,000 conversations on one memory store and host, as `bench/overhead.ts`
 * runs them, printing the mean wall time per conversation between marks.
 * The harness's seq figure is taken after 3,000 steps, i.e. about the 300th
 * conversation.
 *
 * Run from a checkout: `node --import tsx bench/archive/2026-12-02-round8/warmup.ts`
 * (add `--trace-opt` to see which functions TurboFan optimizes after which mark).
 *
 * @module
 */
import { memoryStore, openHost } from "@floret/engine";
import { USER_PROMPT } from "../../lib/script.mjs";
import { counterAgent } from "../../lib/workload.ts";

const MARKS = new Set([30, 100, 300, 600, 1000, 2000, 3000]);
const store = memoryStore();
const host = await openHost({ store });
const threads = host.threads({ agent: counterAgent("counter", 10) });
let since = performance.now();
let last = 0;
for (let i = 1; i <= 3000; i++) {
  const { threadId } = await threads.create({ requestKey: `${i}:create` });
  await threads.send({ threadId, requestKey: `${i}:send`, input: { text: USER_PROMPT } });
  await threads.waitForIdle(threadId);
  if (MARKS.has(i)) {
    const now = performance.now();
    const us = (1000 * (now - since) / (i - last)).toFixed(0);
    console.log(`conversations ${last + 1}-${i}: ${us} us per conversation`);
    since = now;
    last = i;
  }
}
await host.shutdown();
await store.close();
