/**
 * The fixed per-conversation cost, round 7: the overhead workload's
 * conversation (create + send + waitForIdle, the scripted `add` agent) with
 * N tool steps (default 0: one text step), 300 conversations per round on a
 * fresh memory store, 15 rounds, the first 3 for warm-up. Prints the wall
 * time of each command and the process CPU time per conversation.
 *
 * Run from a checkout: `N=0 node --import tsx bench/archive/2026-12-02-fixed7/split.ts`
 * (the A/B copied it into both trees and alternated them, base first).
 *
 * @module
 */
import { memoryStore, openHost } from "@floret/engine";
import { USER_PROMPT } from "../../lib/script.mjs";
import { counterAgent } from "../../lib/workload.ts";

const ROUNDS = 15;
const CONVS = 300;
const N = Number(process.env.N ?? 0);
const wall = { create: 0, send: 0, wait: 0, conv: 0 };
let cpuMs = 0;
for (let round = 0; round < ROUNDS; round++) {
  const store = memoryStore();
  const host = await openHost({ store });
  const threads = host.threads({ agent: counterAgent("counter", N) });
  const cpu = process.cpuUsage();
  for (let i = 0; i < CONVS; i++) {
    const a = performance.now();
    const { threadId } = await threads.create({ requestKey: `${round}-${i}:create` });
    const b = performance.now();
    await threads.send({ threadId, requestKey: `${i}:send`, input: { text: USER_PROMPT } });
    const c = performance.now();
    await threads.waitForIdle(threadId);
    const d = performance.now();
    if (round >= 3) {
      wall.create += b - a;
      wall.send += c - b;
      wall.wait += d - c;
      wall.conv += d - a;
    }
  }
  const used = process.cpuUsage(cpu);
  if (round >= 3) cpuMs += (used.user + used.system) / 1000;
  await host.shutdown();
  await store.close();
}
const convs = (ROUNDS - 3) * CONVS;
const us = (ms: number): string => (1000 * ms / convs).toFixed(1);
console.log(
  Object.entries(wall).map(([name, ms]) => `${name} ${us(ms)}`).join("  "),
  ` cpu/conv ${us(cpuMs)} µs`,
);
