// A host process for the scale tests (several hosts on one store, kill-soak).
// It opens a host with its own hostId on a shared store and keeps sending
// tool conversations to the given threads, all threads at once. Every send it
// saw accepted is printed as `ACK <json>` before anything else happens; each
// `record` call appends its call id to the side file, so the parent counts
// side effects. `DONE` ends a finite run.
//
// Usage: scale_child.ts <json config>   (see Config below)
import { appendFileSync } from "node:fs";
import { defineAgent, isFloretError, openHost } from "@floret/engine";
import type { ThreadService } from "@floret/engine";
import { openStoreUrl } from "./store_url.ts";
import { conversationGateway, recordTool } from "./conversation_gateway.ts";

interface Config {
  url: string;
  sideFile: string;
  hostId: string;
  leaseTtlMs: number;
  threadIds: string[];
  /** Prefix of this process's request keys (unique per process). */
  prefix: string;
  /** Sends per thread; 0 sends until killed. */
  sends: number;
  /** Tool calls per conversation. */
  tools: number;
  /** Upper bound of the model's random delay per answer, ms. */
  delayMs: number;
  /** The model never answers (a turn to be killed mid-run). */
  hang?: boolean;
}

const config = JSON.parse(process.argv.at(-1) as string) as Config;
// Bounded: a child the parent forgot still ends.
setTimeout(() => {
  console.error("scale_child: watchdog expired");
  process.exit(3);
}, 120_000);

const emit = (tag: string, payload: unknown): void =>
  console.log(`${tag} ${JSON.stringify(payload)}`);

const agent = defineAgent({
  id: "scale",
  systemPrompt: "Scale test.",
  gateway: conversationGateway({
    delayMs: () => config.hang ? 600_000 : Math.floor(Math.random() * config.delayMs),
  }),
  tools: [recordTool((callId) => appendFileSync(config.sideFile, `${callId}\n`))],
});
const host = await openHost({
  store: await openStoreUrl(config.url),
  hostId: config.hostId,
  leaseTtlMs: config.leaseTtlMs,
});
const threads = host.threads({ agent });

/** Queued input after a failed or cancelled turn waits for a promote; the soak keeps it moving. */
async function promoteStuck(service: ThreadService, threadId: string, n: number): Promise<void> {
  const view = await service.view(threadId);
  const first = view.queue[0];
  if (view.status !== "idle" || !first) return;
  await service.promoteQueued({ threadId, requestKey: `${config.prefix}-p${n}`, queueId: first.id })
    .catch(() => {}); // another host may have promoted it first
}

/** Sends that gave up after the engine's bounded re-plans (another host kept writing). */
let contended = 0;

/**
 * A send that loses the race for its thread more than 8 times in a row fails
 * with storage_failure without taking effect or consuming its key; a client
 * sends again with the same key, as this does.
 */
async function sendRetrying(threadId: string, requestKey: string, text: string) {
  for (let attempt = 1;; attempt++) {
    try {
      return await threads.send({ threadId, requestKey, input: { text } });
    } catch (error) {
      if (!isFloretError(error, "storage_failure") || attempt >= 20) throw error;
      contended++;
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 50));
    }
  }
}

async function drive(threadId: string, index: number): Promise<void> {
  for (let j = 0; config.sends === 0 || j < config.sends; j++) {
    const requestKey = `${config.prefix}-t${index}-${j}`;
    const text = `tools:${config.tools} ${requestKey}`;
    const result = await sendRetrying(threadId, requestKey, text);
    emit("ACK", { threadId, requestKey, queued: result.queued, turnId: result.turnId });
    if (config.hang) return;
    try {
      await threads.waitForIdle(threadId, { timeoutMs: 30_000 });
    } catch (error) {
      if (!isFloretError(error, "timeout")) throw error;
    }
    await promoteStuck(threads, threadId, index * 1_000_000 + j);
  }
}

await Promise.all(config.threadIds.map((threadId, index) => drive(threadId, index)));
if (config.hang) await new Promise(() => {});
await host.shutdown();
emit("DONE", { hostId: config.hostId, contended });
process.exit(0);
