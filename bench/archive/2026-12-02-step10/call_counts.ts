/**
 * How many times each function runs per conversation of the overhead
 * workload (N=10, memory store), counted by `node:inspector`'s precise
 * coverage over conversations FROM–TO (default 301–320, where the harness's
 * seq N=10 figure is taken): a proxy for the JavaScript a step executes
 * before V8 has optimized it, where every call and every bytecode costs.
 *
 * Run from a checkout: `node --import tsx bench/archive/2026-12-02-step10/call_counts.ts [top=80]`
 * (env FROM, TO, FILTER: a substring of the script URLs to list).
 *
 * @module
 */
import { Session } from "node:inspector/promises";
import { memoryStore, openHost } from "@floret/engine";
import { USER_PROMPT } from "../../lib/script.mjs";
import { counterAgent } from "../../lib/workload.ts";

const FROM = Number(process.env.FROM ?? 301);
const TO = Number(process.env.TO ?? 320);
const FILTER = process.env.FILTER ?? "";
const top = Number(process.argv[2] ?? 80);
const session = new Session();
session.connect();
await session.post("Profiler.enable");
const store = memoryStore();
const host = await openHost({ store });
const threads = host.threads({ agent: counterAgent("counter", 10) });
for (let i = 1; i <= TO; i++) {
  // Starting precise coverage resets the counts: only FROM–TO are counted.
  if (i === FROM) {
    await session.post("Profiler.startPreciseCoverage", { callCount: true, detailed: false });
  }
  const { threadId } = await threads.create({ requestKey: `${i}:create` });
  await threads.send({ threadId, requestKey: `${i}:send`, input: { text: USER_PROMPT } });
  await threads.waitForIdle(threadId);
}
const { result } = await session.post("Profiler.takePreciseCoverage");
await session.post("Profiler.stopPreciseCoverage");
session.disconnect();
await host.shutdown();
await store.close();

const conversations = TO - FROM + 1;
const rows: { count: number; name: string; where: string }[] = [];
for (const script of result) {
  if (FILTER && !script.url.includes(FILTER)) continue;
  const where = script.url.replace(/^.*?\/(src|adapters|bench|node_modules)\//, "$1/");
  for (const fn of script.functions) {
    // A function's first range covers it whole; its count is how often it ran.
    const count = fn.ranges[0].count;
    if (count > 0 && fn.functionName !== "") rows.push({ count, name: fn.functionName, where });
    else if (count > 0) {
      rows.push({ count, name: `(anonymous@${fn.ranges[0].startOffset})`, where });
    }
  }
}
rows.sort((a, b) => b.count - a.count);
const total = rows.reduce((sum, r) => sum + r.count, 0);
console.log(
  `calls per conversation, conversations ${FROM}-${TO}: ${
    (total / conversations).toFixed(0)
  } in all`,
);
for (const r of rows.slice(0, top)) {
  console.log(`${(r.count / conversations).toFixed(1).padStart(7)}  ${r.name}  ${r.where}`);
}
