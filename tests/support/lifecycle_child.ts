// Child process of lifecycle_crash.test.ts: opens a host on a libSQL file
// with a `provider`-titled agent whose title request never answers, sends the
// first message, and prints `READY <json>` once the turn has completed and
// the title request is in flight. The parent SIGKILLs it there. A watchdog
// ends a child the parent forgot.
//
// Usage: lifecycle_child.ts <libsql url>
import { defineAgent, openHost } from "@floret/engine";
import { libsqlStore } from "@floret/engine/libsql";
import { titleGateway } from "./title_gateway.ts";

const [url] = process.argv.slice(-1);
setTimeout(() => {
  console.error("lifecycle_child: watchdog expired");
  process.exit(3);
}, 30_000);

const gateway = titleGateway([{ text: "Answer." }], { hang: true });
const host = await openHost({ store: libsqlStore({ url }) });
const threads = host.threads({
  agent: defineAgent({ id: "titled", systemPrompt: "x", gateway, titles: "provider" }),
});
const { threadId } = await threads.create({ requestKey: "create" });
await threads.send({ threadId, requestKey: "send-1", input: { text: "Crash course\nin titles" } });
await gateway.titleStarted;
const view = await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
console.log(`READY ${JSON.stringify({ threadId, titleStatus: view.titleStatus })}`);
await new Promise<never>(() => {});
