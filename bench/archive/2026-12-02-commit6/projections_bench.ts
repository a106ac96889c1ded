/**
 * Round 6 micro-benchmark: the projections a thread actor feeds on every
 * commit, alone. It records one N=10 conversation of the overhead workload,
 * then applies its entries to fresh `ThreadProjections` (all of them, and each
 * projection alone) and prints µs per conversation, the minimum of 7 rounds
 * of 5,000 conversations (whole-run A/B pairs cannot resolve a few µs per
 * step on this shared machine).
 *
 * Run from a checkout: `DIR=$PWD node --import tsx bench/archive/2026-12-02-commit6/projections_bench.ts`
 * (DIR names the checkout whose `src/` is measured; the recording uses this one).
 *
 * @module
 */
import { defineAgent, memoryStore, openHost } from "@floret/engine";
import { SYSTEM_PROMPT, USER_PROMPT } from "../../lib/script.mjs";
import { addTool, scriptedAddGateway } from "../../lib/workload.ts";

interface Applies {
  apply(entry: unknown): void;
}
type Projections = Applies & Record<string, Applies>;
type ProjectionsClass = new (sink: unknown) => Projections;

const dir = process.env.DIR ?? process.cwd();
const { ThreadProjections } = (await import(`${dir}/src/projection/thread_projections.ts`)) as {
  ThreadProjections: ProjectionsClass;
};

const store = memoryStore();
const host = await openHost({ store });
const agent = defineAgent({
  id: "counter",
  systemPrompt: SYSTEM_PROMPT,
  gateway: scriptedAddGateway(10),
  tools: [addTool],
  maxSteps: 11,
});
const threads = host.threads({ agent });
const { threadId } = await threads.create({ requestKey: "c" });
await threads.send({ threadId, requestKey: "s", input: { text: USER_PROMPT } });
await threads.waitForIdle(threadId);
const rows = await store.list({ prefix: ["entry", threadId] });
const entries: unknown[] = rows.map((row) => JSON.parse(new TextDecoder().decode(row.value)));
await host.shutdown();

const sink = { hasSubscribers: false, push() {}, touch() {} };
const parts = ["all", "interactions", "view", "history", "openCalls", "context"];

/** µs per conversation for one part (entries cloned beforehand: a projection may keep them). */
function time(part: string, n: number): number {
  const batch = Array.from({ length: n }, () => entries.map((entry) => structuredClone(entry)));
  const started = performance.now();
  for (let i = 0; i < n; i++) {
    const projections = new ThreadProjections(sink);
    const target = part === "all" ? projections : projections[part];
    for (const entry of batch[i]) target.apply(entry);
  }
  return (performance.now() - started) * 1000 / n;
}

for (const part of parts) time(part, 5000);
const best = new Map<string, number>();
for (let round = 0; round < 7; round++) {
  for (const part of parts) best.set(part, Math.min(best.get(part) ?? Infinity, time(part, 5000)));
}
console.log(
  [...best].map(([part, us]) => `${part}=${us.toFixed(2)}`).join(" "),
  `µs per conversation (${entries.length} entries, min of 7)`,
);
