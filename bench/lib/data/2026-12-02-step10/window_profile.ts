/**
 * A CPU profile of the overhead workload's conversations FROM–TO only (default
 * 101–320): the window in which the harness's seq N=10 figure is taken while
 * V8 has not yet optimized much of the engine. Runs conversations as
 * `bench/overhead.ts` does (create + send + waitForIdle, the scripted `add`
 * agent, N=10, one memory store and host), starts `node:inspector`'s Profiler
 * before conversation FROM and writes the profile after conversation TO.
 *
 * Run from a checkout: `node --import tsx bench/lib/data/2026-12-02-step10/window_profile.ts OUT.cpuprofile`
 * (env FROM, TO, INTERVAL in µs), then `npx tsx bench/lib/profile_top.ts OUT.cpuprofile 60`.
 *
 * @module
 */
import { writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { memoryStore, openHost } from "@floret/engine";
import { USER_PROMPT } from "../../script.mjs";
import { counterAgent } from "../../workload.ts";

const FROM = Number(process.env.FROM ?? 101);
const TO = Number(process.env.TO ?? 320);
const INTERVAL = Number(process.env.INTERVAL ?? 100);
const out = process.argv[2] ?? "window.cpuprofile";
const session = new Session();
session.connect();
await session.post("Profiler.enable");
await session.post("Profiler.setSamplingInterval", { interval: INTERVAL });
const store = memoryStore();
const host = await openHost({ store });
const threads = host.threads({ agent: counterAgent("counter", 10) });
let started = 0;
for (let i = 1; i <= TO; i++) {
  if (i === FROM) {
    await session.post("Profiler.start");
    started = performance.now();
  }
  const { threadId } = await threads.create({ requestKey: `${i}:create` });
  await threads.send({ threadId, requestKey: `${i}:send`, input: { text: USER_PROMPT } });
  await threads.waitForIdle(threadId);
}
const { profile } = await session.post("Profiler.stop");
const us = (1000 * (performance.now() - started) / (TO - FROM + 1)).toFixed(0);
console.log(`conversations ${FROM}-${TO}: ${us} us per conversation (profiled)`);
writeFileSync(out, JSON.stringify(profile));
session.disconnect();
await host.shutdown();
await store.close();
