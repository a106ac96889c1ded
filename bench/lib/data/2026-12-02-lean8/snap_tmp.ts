import { writeHeapSnapshot } from "node:v8";
import { memoryStore, openHost } from "@floret/engine";
import { USER_PROMPT } from "../../script.mjs";
import { counterAgent } from "../../workload.ts";
const N = Number(process.env.N ?? 0);
const host = await openHost({ store: memoryStore() });
const threads = host.threads({ agent: counterAgent("counter", N) });
for (let i = 0; i < 100; i++) {
  const { threadId } = await threads.create({ requestKey: `${i}:create` });
  await threads.send({ threadId, requestKey: `${i}:send`, input: { text: USER_PROMPT } });
  await threads.waitForIdle(threadId);
}
console.log(writeHeapSnapshot("/tmp/lean8-c.heapsnapshot"));
