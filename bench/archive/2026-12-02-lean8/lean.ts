/**
 * Round 8's memory probe of the overhead workload (create + send +
 * waitForIdle, the scripted `add` gateway, a memory store), Node only:
 *
 * - `MODE=retained` (needs `--expose-gc`): heap kept per cached idle actor.
 *   20 conversations, gc, heapUsed; 480 more (the cache, 512 at most, holds
 *   them all), gc, heapUsed; 512 more to fill the cache, gc, heapUsed; 1000
 *   more with the cache full (as many actors dropped as made), gc, heapUsed:
 *   that last growth is the store's own per conversation, subtracted from the
 *   second to leave the actor's.
 * - `MODE=alloc`: bytes allocated per conversation and their top sites, from
 *   the sampling heap profiler (interval 512 bytes, objects a minor or major
 *   GC collected included) over 200 conversations after 200 of warm-up.
 *
 * Run from the checkout to measure (the engine resolves by package name):
 * `N=10 MODE=retained node --expose-gc --import tsx bench/archive/2026-12-02-lean8/lean.ts`
 * `N=10 MODE=alloc node --import tsx bench/archive/2026-12-02-lean8/lean.ts`
 *
 * @module
 */
import { Session } from "node:inspector/promises";
import { memoryStore, openHost } from "@floret/engine";
import { USER_PROMPT } from "../../lib/script.mjs";
import { counterAgent } from "../../lib/workload.ts";

const N = Number(process.env.N ?? 10);
const MODE = process.env.MODE ?? "retained";
const TOP = Number(process.env.TOP ?? 30);

const store = memoryStore();
const host = await openHost({ store });
const threads = host.threads({ agent: counterAgent("counter", N) });
let next = 0;
async function conversations(count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const id = `c${next++}`;
    const { threadId } = await threads.create({ requestKey: `${id}:create` });
    await threads.send({ threadId, requestKey: `${id}:send`, input: { text: USER_PROMPT } });
    await threads.waitForIdle(threadId);
  }
}

function settledHeap(): number {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error("MODE=retained needs node --expose-gc");
  for (let i = 0; i < 4; i++) gc();
  return process.memoryUsage().heapUsed;
}

interface SamplingNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: SamplingNode[];
}

if (MODE === "retained") {
  await conversations(20);
  const h0 = settledHeap();
  await conversations(480);
  const h1 = settledHeap();
  await conversations(512);
  const h2 = settledHeap();
  await conversations(1000);
  const h3 = settledHeap();
  const storePerConv = (h3 - h2) / 1000;
  const bothPerConv = (h1 - h0) / 480;
  console.log(
    `N=${N} retained: actor+store ${(bothPerConv / 1024).toFixed(2)} KiB/conv, store ${
      (storePerConv / 1024).toFixed(2)
    } KiB/conv, idle actor ${((bothPerConv - storePerConv) / 1024).toFixed(2)} KiB`,
  );
} else if (MODE === "alloc") {
  const CONVS = 200;
  await conversations(200);
  const session = new Session();
  session.connect();
  await session.post("HeapProfiler.startSampling", {
    samplingInterval: 512,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  await conversations(CONVS);
  const { profile } = await session.post("HeapProfiler.getSamplingProfile") as {
    profile: { head: SamplingNode };
  };
  await session.post("HeapProfiler.stopSampling");
  session.disconnect();
  const sites = new Map<string, number>();
  let total = 0;
  // A built-in (no url: Map, slice, push...) is named with the function that called it.
  const walk = (node: SamplingNode, caller: string): void => {
    const { functionName, url } = node.callFrame;
    const file = url.replace(/^.*\/(src|adapters|bench|node_modules)\//, "$1/");
    const name = `${functionName || "(anonymous)"} ${file}`;
    const site = url ? name : `${name}<-${caller}`;
    if (node.selfSize > 0) {
      sites.set(site, (sites.get(site) ?? 0) + node.selfSize);
      total += node.selfSize;
    }
    for (const child of node.children) walk(child, url ? name : caller);
  };
  walk(profile.head, "");
  const steps = Math.max(N, 1);
  console.log(
    `N=${N} alloc: ${(total / CONVS / 1024).toFixed(1)} KiB/conv, ${
      (total / CONVS / steps / 1024).toFixed(1)
    } KiB/step (sampled, ${CONVS} conversations)`,
  );
  const ranked = [...sites].sort((a, b) => b[1] - a[1]).slice(0, TOP);
  for (const [site, bytes] of ranked) {
    console.log(`${(bytes / CONVS).toFixed(0).padStart(8)} B/conv  ${site}`);
  }
} else {
  throw new Error(`unknown MODE ${MODE}`);
}
await host.shutdown();
await store.close();
