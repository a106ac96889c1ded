/**
 * The overhead workload's conversations (create + send + waitForIdle, the
 * scripted `add` agent, N=10, one memory store and host, as `bench/overhead.ts`
 * runs them) 1–600, printing mean wall and CPU µs per conversation over
 * 101–300 and 301–600: the window around the 300th conversation where the
 * harness takes its seq N=10 figure while V8 is still tiering the engine up.
 * CPU time (process.cpuUsage) is less disturbed than wall time by other work
 * on a shared machine.
 *
 * Run from a checkout: `node --import tsx bench/archive/2026-12-02-step10/warm_window.ts`
 *
 * @module
 */
import { memoryStore, openHost } from "@floret/engine";
import { USER_PROMPT } from "../../lib/script.mjs";
import { counterAgent } from "../../lib/workload.ts";

const MARKS = [100, 300, 600];
const store = memoryStore();
const host = await openHost({ store });
const threads = host.threads({ agent: counterAgent("counter", 10) });
const out: Record<string, { wall: number; cpu: number }> = {};
let wall = performance.now();
let cpu = process.cpuUsage();
let last = 0;
for (let i = 1; i <= MARKS[MARKS.length - 1]; i++) {
  const { threadId } = await threads.create({ requestKey: `${i}:create` });
  await threads.send({ threadId, requestKey: `${i}:send`, input: { text: USER_PROMPT } });
  await threads.waitForIdle(threadId);
  if (MARKS.includes(i)) {
    const nowWall = performance.now();
    const used = process.cpuUsage(cpu);
    const n = i - last;
    out[`${last + 1}-${i}`] = {
      wall: Math.round(1000 * (nowWall - wall) / n),
      cpu: Math.round((used.user + used.system) / n),
    };
    wall = nowWall;
    cpu = process.cpuUsage();
    last = i;
  }
}
console.log(JSON.stringify(out));
await host.shutdown();
await store.close();
