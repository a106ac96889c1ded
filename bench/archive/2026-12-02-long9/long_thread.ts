/**
 * One thread of many turns on memoryStore, for a CPU profile of late turns:
 * `node --import tsx --cpu-prof bench/archive/2026-12-02-long9/long_thread.ts [turns] [--no-read]`.
 *
 * @module
 */
import { memoryStore, openHost } from "@floret/engine";
import { USER_PROMPT } from "../../lib/script.mjs";
import { counterAgent, summarize } from "../../lib/workload.ts";

const turns = Number(process.argv[2] ?? 1500);
// `--no-read`: the view's items are not read after each turn (see probe.ts).
const readView = !process.argv.includes("--no-read");
const store = memoryStore();
const host = await openHost({ store });
const threads = host.threads({ agent: counterAgent("long", 1) });
const { threadId } = await threads.create({ requestKey: "long:create" });
for (let turn = 1; turn <= turns; turn++) {
  await threads.send({ threadId, requestKey: `long:${turn}`, input: { text: USER_PROMPT } });
  const view = await threads.waitForIdle(threadId);
  if (readView && summarize(view).finalText !== "done") throw new Error(`turn ${turn} failed`);
  if (view.status !== "idle") throw new Error(`turn ${turn} left the thread ${view.status}`);
}
await host.shutdown();
await store.close();
