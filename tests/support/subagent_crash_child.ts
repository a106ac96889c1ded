// Child process of subagents_crash.test.ts: drives a lead thread with one
// worker child on a libSQL file to a chosen point, prints `READY <json>`
// there and waits to be SIGKILLed. A watchdog ends it if nobody does.
//
// Usage: subagent_crash_child.ts <scenario> <libsql url>
//   spawn     the child exists and runs; the lead's batch (spawn + a held read) is not committed
//   spawned   the spawn's result is committed and the child runs; the lead's next request hangs
//   wait      the lead waits in wait_agents for the child, whose model hangs
//   continue  the child completed, the lead's wait returned, the lead's next request hangs
import { openHost } from "@floret/engine";
import { scriptedGateway } from "@floret/engine/testing";
import { openStoreUrl } from "./store_url.ts";
import { holdTool, leadAgent, SPAWN, WAIT, watched } from "./subagent_family.ts";

const [scenario, url] = process.argv.slice(-2);
setTimeout(() => {
  console.error("subagent_crash_child: watchdog expired");
  process.exit(3);
}, 30_000);
const runtime = "Deno" in globalThis ? "deno" : "Bun" in globalThis ? "bun" : "node";

let leadStarts = 0;
let workerStarts = 0;
let held = false;
let threadId = "";
const ready = (): void => console.log(`READY ${JSON.stringify({ threadId, runtime })}`);
const check = (): void => {
  const reached = scenario === "spawn"
    ? held && workerStarts >= 1
    : scenario === "spawned"
    ? leadStarts >= 2 && workerStarts >= 1
    : scenario === "wait"
    ? leadStarts >= 2 && workerStarts >= 1
    : leadStarts >= 3;
  // The wait tool starts right after the lead's second response: give it a moment.
  if (reached) setTimeout(ready, scenario === "wait" ? 200 : 0);
};

const lead = scenario === "spawn"
  ? [{ toolCalls: [SPAWN, { name: "hold", callId: "call-hold", arguments: {} }] }]
  : scenario === "spawned"
  ? [{ toolCalls: [SPAWN] }, { hang: true as const }]
  : [{ toolCalls: [SPAWN] }, WAIT, { hang: true as const }];
const worker = scenario === "continue" ? [{ text: "found it" }] : [{ hang: true as const }];
const agent = leadAgent(
  watched(scriptedGateway(lead), (n) => {
    leadStarts = n;
    check();
  }),
  watched(scriptedGateway(worker), (n) => {
    workerStarts = n;
    check();
  }),
  holdTool(() => {
    held = true;
    check();
  }),
);
const host = await openHost({ store: await openStoreUrl(url) });
const threads = host.threads({ agent });
threadId = (await threads.create({ requestKey: "create" })).threadId;
await threads.send({ threadId, requestKey: "send-1", input: { text: "go" } });
await new Promise(() => {});
