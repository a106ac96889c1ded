// Child process of crash_recovery.test.ts. It opens a host on a libSQL file,
// drives one thread to a chosen point and prints `READY <json>` there; the
// parent SIGKILLs it at once. Every send the child saw accepted is printed as
// `ACK <json>` first. The child never finishes by itself: a watchdog ends it
// if the parent does not.
//
// Usage: crash_child.ts <scenario> <libsql url | denokv:path> <side file>
//   stream  the provider streams some text, then hangs
//   write   a `write` tool appends a line to the side file, then hangs
//   read    a `read` tool appends a line to the side file, then hangs
//   written a `write` tool appends a line and returns; the next model request hangs
//   queue   turn 1 completes with input queued behind it; the handed-over turn hangs
//   loop    a turn of many steps, each one `write` call that appends its call id and
//           prints `TICK <json>`; the parent kills at some tick
//   flood   turn 1 hangs while sends are queued one after another, without end
//   summary turn 1 reports usage over the compaction threshold; turn 2's summary request hangs
//   compact two turns answer at length in an 8,000-token window; a manual `compact`
//           (key "compact-1") runs and its summary request hangs
import { appendFileSync } from "node:fs";
import { z } from "zod";
import { defineAgent, defineTool, openHost } from "@floret/engine";
import type { Gateway, ProviderEvent, ProviderRequest } from "@floret/engine";
import { scriptedGateway } from "@floret/engine/testing";
import type { ScriptStep } from "@floret/engine/testing";
import { openStoreUrl } from "./store_url.ts";

const [scenario, url, sideFile] = process.argv.slice(-3);

// Bounded: a child the parent forgot still ends.
setTimeout(() => {
  console.error("crash_child: watchdog expired");
  process.exit(3);
}, 30_000);

const runtime = "Deno" in globalThis ? "deno" : "Bun" in globalThis ? "bun" : "node";

function emit(tag: "ACK" | "READY" | "TICK", payload: Record<string, unknown>): void {
  console.log(`${tag} ${JSON.stringify({ ...payload, runtime })}`);
}

let reach: (detail: Record<string, unknown>) => void = () => {};
/** Resolves when the gateway or a tool reached the chosen point. */
const reached = new Promise<Record<string, unknown>>((resolve) => (reach = resolve));
/** Never settles: holds a handler (or stream) where the crash should find it. */
const forever = new Promise<never>(() => {});

/** Reports each stream start (1-based) and, optionally, the first text event of a stream. */
function watched(
  inner: Gateway,
  hooks: { onStart?: (n: number) => void; onText?: (n: number) => void },
): Gateway {
  let started = 0;
  return {
    info: inner.info,
    stream(
      request: ProviderRequest,
      options: { signal: AbortSignal },
    ): AsyncIterable<ProviderEvent> {
      const n = ++started;
      hooks.onStart?.(n);
      const events = inner.stream(request, options);
      return (async function* () {
        let seenText = false;
        for await (const event of events) {
          yield event;
          // Reached once the engine has taken the delta and asked for more.
          if (event.type === "text" && !seenText) {
            seenText = true;
            hooks.onText?.(n);
          }
        }
      })();
    },
  };
}

const sideEffect = (name: string, effect: "read" | "write", hang: boolean) =>
  defineTool({
    name,
    description: `Appends a line to the side file (${effect})${hang ? ", then never returns" : ""}`,
    input: z.object({ line: z.string() }),
    effect,
    execute: async ({ line }, context) => {
      appendFileSync(sideFile, `${line}\n`);
      if (!hang) return `ok: ${line}`;
      reach({ callId: context.callId, turnId: context.turnId });
      return await forever;
    },
  });

let steps: ScriptStep[];
let hooks: { onStart?: (n: number) => void; onText?: (n: number) => void } = {};
switch (scenario) {
  case "stream":
    steps = [{ hang: true, text: "Partial answer that never" }];
    hooks = { onText: () => reach({}) };
    break;
  case "write":
    steps = [{ toolCalls: [{ name: "append_line", arguments: { line: "written" } }] }];
    break;
  case "read":
    steps = [{ toolCalls: [{ name: "lookup", arguments: { line: "looked up" } }] }];
    break;
  case "queue":
    steps = [{ text: "First answer.", delayMs: 400 }, { hang: true }];
    hooks = { onStart: (n) => n === 2 && reach({}) };
    break;
  case "written":
    steps = [{ toolCalls: [{ name: "append_once", arguments: { line: "written" } }] }, {
      hang: true,
    }];
    hooks = { onStart: (n) => n === 2 && reach({}) };
    break;
  case "loop":
    steps = Array.from({ length: 60 }, (_, i) => ({
      toolCalls: [{ name: "record_call", arguments: { line: `step ${i}` } }],
    }));
    steps.push({ hang: true });
    break;
  case "flood":
    steps = [{ hang: true }];
    break;
  case "summary":
    // 120,000 of the scripted 128,000-token window: turn 2 compacts before its first request.
    steps = [{ text: "First answer.", usage: { inputTokens: 120_000 } }, { hang: true }];
    hooks = { onStart: (n) => n === 2 && reach({}) };
    break;
  case "compact":
    // About 8,000 rough tokens of answers: over the 7,200-token target of an 8,000-token
    // window, while each turn's own request stays under it.
    steps = [{ text: "long ".repeat(3_500) }, { text: "more ".repeat(2_200) }, { hang: true }];
    hooks = { onStart: (n) => n === 3 && reach({}) };
    break;
  default:
    throw new Error(`Unknown scenario: ${scenario}`);
}

const agent = defineAgent({
  id: "crash-child",
  systemPrompt: "Crash test.",
  ...(scenario === "compact" ? { context: { windowTokens: 8_000 } } : {}),
  gateway: watched(scriptedGateway(steps), hooks),
  tools: [
    sideEffect("append_line", "write", true),
    sideEffect("lookup", "read", true),
    sideEffect("append_once", "write", false),
    defineTool({
      name: "record_call",
      description: "Appends its call id to the side file",
      input: z.object({ line: z.string() }),
      effect: "write",
      execute: ({ line }, context) => {
        appendFileSync(sideFile, `${context.callId}\n`);
        emit("TICK", { callId: context.callId, line });
        return `recorded ${line}`;
      },
    }),
  ],
});
const host = await openHost({ store: await openStoreUrl(url) });
const threads = host.threads({ agent });
const { threadId } = await threads.create({ requestKey: "create" });

async function send(requestKey: string, text: string): Promise<void> {
  const result = await threads.send({ threadId, requestKey, input: { text } });
  const ack: Record<string, unknown> = { threadId, requestKey, text, queued: result.queued };
  if (result.turnId !== undefined) ack.turnId = result.turnId;
  const queueId = result.view.queue.find((entry) => entry.requestKey === requestKey)?.id;
  if (queueId !== undefined) ack.queueId = queueId;
  emit("ACK", ack);
}

if (scenario === "queue") {
  await send("send-1", "first");
  await send("send-2", "second");
  await send("send-3", "third");
  await reached; // turn 1 completed and handed over to "second", whose stream hangs
  await send("send-4", "fourth");
  emit("READY", { threadId });
} else if (scenario === "flood") {
  // The parent kills the child while it is still sending.
  for (let i = 0; i < 2_000; i++) await send(`flood-${i}`, `message ${i}`);
  emit("READY", { threadId, exhausted: true });
} else if (scenario === "loop") {
  await send("send-1", "go");
} else if (scenario === "compact") {
  await send("send-1", "first");
  await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
  await send("send-2", "second");
  await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
  // Settles only after the crash: the parent replays the key on the reopened file.
  void threads.compact({ threadId, requestKey: "compact-1" });
  emit("READY", { threadId, ...await reached });
} else if (scenario === "summary") {
  await send("send-1", "first");
  await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
  await send("send-2", "go");
  emit("READY", { threadId, ...await reached });
} else {
  await send("send-1", "go");
  emit("READY", { threadId, ...await reached });
}
await forever;
