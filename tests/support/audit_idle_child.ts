/**
 * A host that goes through a run's whole life — tool calls, an approval
 * granted and one denied, an immediate cancel of a stream and of a tool that
 * ignores its signal, a graceful cancel, a cancel during a 60 s retry sleep,
 * waits with long timeouts, a subscription nobody ends — and is then left
 * open, never shut down, with one thread waiting for an approval. The
 * process must still end by itself: nothing of that may leave a timer or
 * handle that keeps it alive. Prints `idle` at the end. A libSQL URL as the
 * first argument puts the journal in that file (the store is left open too).
 */
import { z } from "zod";
import { defineAgent, defineTool, memoryStore, openHost } from "@floret/engine";
import { scriptedGateway } from "@floret/engine/testing";

const LONG = { timeoutMs: 600_000 };
let releaseGraceful!: () => void;
const add = defineTool({
  name: "add",
  description: "Adds",
  input: z.object({ a: z.number(), b: z.number() }),
  execute: ({ a, b }) => String(a + b),
});
const guarded = defineTool({
  name: "guarded",
  description: "Needs approval",
  input: z.object({}),
  effect: "write",
  permission: "ask",
  execute: () => "written",
});
const deaf = defineTool({
  name: "deaf",
  description: "Never returns and ignores its signal",
  input: z.object({}),
  execute: () => new Promise<string>(() => {}),
});
const polite = defineTool({
  name: "polite",
  description: "Returns when the test says",
  input: z.object({}),
  execute: () => new Promise<string>((resolve) => (releaseGraceful = () => resolve("polite"))),
});
const gateway = scriptedGateway([
  // 1: a tool turn
  { toolCalls: [{ name: "add", arguments: { a: 1, b: 2 } }] },
  { text: "3" },
  // 2: an approval granted, 3: one denied
  { toolCalls: [{ name: "guarded", arguments: {} }] },
  { text: "approved" },
  { toolCalls: [{ name: "guarded", arguments: {} }] },
  { text: "denied" },
  // 4: a stream cancelled
  { hang: true, text: "partial" },
  // 5: a tool that ignores its signal, cancelled
  { toolCalls: [{ name: "deaf", arguments: {} }] },
  // 6: a graceful cancel while a tool finishes
  { toolCalls: [{ name: "polite", arguments: {} }] },
  // 7: a cancel during the retry sleep
  { error: { status: 503, retry: "retryable", message: "busy" } },
  // 8: left waiting for an approval
  { toolCalls: [{ name: "guarded", arguments: {} }] },
]);
const url = process.argv[2];
const host = await openHost({
  store: url ? (await import("@floret/engine/libsql")).libsqlStore({ url }) : memoryStore(),
});
const threads = host.threads({
  agent: defineAgent({
    id: "idle",
    systemPrompt: "Idle test.",
    gateway,
    tools: [add, guarded, deaf, polite],
    providerRetry: { delaysMs: [60_000] },
  }),
});
const { threadId } = await threads.create({ requestKey: "create" });
// A subscription nobody ends.
void (async () => {
  for await (const _ of threads.subscribe(threadId)) { /* drained */ }
})();
let n = 0;
const send = (text: string) =>
  threads.send({ threadId, requestKey: `send-${++n}`, input: { text } });
const check = (ok: boolean, what: string): void => {
  if (!ok) throw new Error(`audit_idle_child: ${what}`);
};
const until = async (done: () => boolean | Promise<boolean>): Promise<void> => {
  for (let i = 0; i < 2_000 && !(await done()); i++) {
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
};

await send("add");
check((await threads.waitForIdle(threadId, LONG)).turns.at(-1)?.outcome === "completed", "tools");

for (const decision of ["approve", "deny"] as const) {
  await send(decision);
  const waiting = await threads.waitForIdle(threadId, LONG);
  check(waiting.status === "waiting", `waiting for ${decision}`);
  await threads.respond({
    threadId,
    requestKey: `respond-${decision}`,
    interactionId: waiting.pending[0].id,
    decision,
  });
  check(
    (await threads.waitForIdle(threadId, LONG)).turns.at(-1)?.outcome === "completed",
    decision,
  );
}

await send("stream");
await until(async () => (await threads.view(threadId)).items.some((item) => item.live));
await threads.cancel({ threadId, requestKey: "cancel-stream" });

await send("deaf");
await until(async () =>
  (await threads.view(threadId)).items.some((item) => item.tool?.status === "running")
);
await threads.cancel({ threadId, requestKey: "cancel-deaf" });

await send("polite");
await until(() => releaseGraceful !== undefined);
const graceful = threads.cancel({ threadId, requestKey: "cancel-polite", mode: "graceful" });
setTimeout(() => releaseGraceful(), 20);
// A graceful cancel returns once its stop request is committed; the turn
// settles when the tool has finished.
check((await graceful).view.stopping?.mode === "graceful", "graceful stop requested");
check(
  (await threads.waitForIdle(threadId, LONG)).turns.at(-1)?.outcome === "cancelled",
  "graceful",
);

await send("retry");
await until(async () => (await threads.view(threadId)).runProgress?.phase === "retry_wait");
const cancelled = await threads.cancel({ threadId, requestKey: "cancel-retry" });
check(cancelled.view.turns.at(-1)?.outcome === "cancelled", "retry sleep cancelled");

await send("last");
check((await threads.waitForIdle(threadId, LONG)).status === "waiting", "left waiting");
console.log("idle");
