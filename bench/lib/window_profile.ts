/**
 * A CPU profile of the overhead workload's conversations FROM..TO only (the
 * harness's seq N=10 figure is taken near the 300th conversation, while V8 is
 * still tiering the code a conversation runs once): the conversations run as
 * `bench/overhead.ts` runs them (create + send + waitForIdle + the summary
 * read of the view) on one memory store and host, and `node:inspector`'s
 * Profiler records only the window, written to OUT (a `.cpuprofile`).
 *
 * Run from a checkout: `node --import tsx bench/lib/window_profile.ts [FROM=101] [TO=320]
 * [OUT=window.cpuprofile]` (env INTERVAL: the sampling interval in µs, 50), then
 * `npx tsx bench/lib/profile_top.ts OUT 60`, or
 * `node --import tsx bench/lib/profile_layers.ts OUT` for the time by engine layer.
 *
 * @module
 */
import { Session } from "node:inspector/promises";
import { writeFileSync } from "node:fs";
import { memoryStore, openHost } from "@floret/engine";
import { USER_PROMPT } from "./script.mjs";
import { counterAgent, summarize } from "./workload.ts";

const [fromArg, toArg, outArg] = process.argv.slice(2);
const FROM = Number(fromArg ?? 101);
const TO = Number(toArg ?? 320);
const OUT = outArg ?? "window.cpuprofile";

const session = new Session();
session.connect();
await session.post("Profiler.enable");
await session.post("Profiler.setSamplingInterval", {
  interval: Number(process.env.INTERVAL ?? 50),
});

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
  summarize(await threads.waitForIdle(threadId));
}
const { profile } = await session.post("Profiler.stop");
const us = (1000 * (performance.now() - started)) / (TO - FROM + 1);
console.log(`conversations ${FROM}-${TO}: ${us.toFixed(0)} us per conversation (profiled)`);
writeFileSync(OUT, JSON.stringify(profile));
session.disconnect();
await host.shutdown();
await store.close();
