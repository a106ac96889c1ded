/**
 * Round 6 micro-benchmark: the journal's planned commit path on a memory
 * store, alone. It records one N=10 conversation of the overhead workload,
 * then commits, per conversation, a new thread and its entries one per commit
 * (as a run appends them), and prints µs per conversation, the minimum of 30
 * rounds of CONVS conversations (default 300, the profile driver's round).
 *
 * Run from a checkout: `DIR=$PWD node --import tsx bench/archive/2026-12-02-commit6/journal_bench.ts`
 *
 * @module
 */
import { defineAgent, type KvStore, memoryStore, openHost } from "@floret/engine";
import { SYSTEM_PROMPT, USER_PROMPT } from "../../lib/script.mjs";
import { addTool, scriptedAddGateway } from "../../lib/workload.ts";

interface Journal {
  commitNow(change: unknown): string | null;
}

const dir = process.env.DIR ?? process.cwd();
const CONVS = Number(process.env.CONVS ?? 300);
const { Journal } = (await import(`${dir}/src/journal/journal.ts`)) as {
  Journal: { open(store: KvStore): Promise<Journal> };
};
// The measured checkout's own store: the planned path is keyed by its module's symbol.
const { memoryStore: measuredStore } = (await import(`${dir}/adapters/storage/memory.ts`)) as {
  memoryStore: () => KvStore;
};

const source = memoryStore();
const host = await openHost({ store: source });
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
const decode = (row: { value: Uint8Array }): Record<string, unknown> =>
  JSON.parse(new TextDecoder().decode(row.value));
const entries = (await source.list({ prefix: ["entry", threadId] })).map(decode);
const [stored] = await source.getMany([["thread", threadId]]);
const record = decode(stored!);
await host.shutdown();

/** One round: CONVS threads created and their entries appended; µs per conversation. */
async function round(): Promise<number> {
  const store = measuredStore();
  const journal = await Journal.open(store);
  const batch = Array.from({ length: CONVS }, () => entries.map((entry) => structuredClone(entry)));
  const records = Array.from({ length: CONVS }, (_, c) => ({ ...record, id: `${record.id}_${c}` }));
  const started = performance.now();
  for (let c = 0; c < CONVS; c++) {
    const version = journal.commitNow({ expected: null, record: records[c], entries: [] });
    const expected = { record: records[c], version };
    for (const entry of batch[c]) journal.commitNow({ expected, record: null, entries: [entry] });
  }
  const us = (performance.now() - started) * 1000 / CONVS;
  await store.close();
  return us;
}

await round();
let best = Infinity;
for (let r = 0; r < 30; r++) best = Math.min(best, await round());
console.log(
  `journal: ${
    best.toFixed(2)
  } µs per conversation (1 create + ${entries.length} appends, min of 30)`,
);
