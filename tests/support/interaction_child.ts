// Child process of interactions_crash.test.ts. It opens a host on a libSQL
// file, drives one thread to a point where people are involved, prints
// `READY <json>` there, and the parent SIGKILLs it at once. A watchdog ends
// the child if the parent does not.
//
// Usage: interaction_child.ts <scenario> <libsql url> <side file>
//   approval  a `write` call that needs approval is pending (the thread waits)
//   approved  the approval was given; the write tool appended its line and hangs
//   graceful  a `write` tool appended its line and hangs; a graceful cancel is draining
//   secret    a secret question was answered; the resumed run's provider request hangs
//   graceful_read  a `read` tool hangs; a graceful cancel's durable request is committed
//   secret_echo  a secret question was answered; the model wrote the secret in its text and
//                passed it to a `read` tool, which appended it to the side file and hangs
import { appendFileSync } from "node:fs";
import { z } from "zod";
import { defineAgent, defineTool, openHost } from "@floret/engine";
import type { Gateway, ProviderEvent, ProviderRequest } from "@floret/engine";
import { scriptedGateway } from "@floret/engine/testing";
import type { ScriptStep } from "@floret/engine/testing";
import { openStoreUrl } from "./store_url.ts";
import { SECRET as ECHOED } from "./secret_spellings.ts";

const [scenario, url, sideFile] = process.argv.slice(-3);
setTimeout(() => {
  console.error("interaction_child: watchdog expired");
  process.exit(3);
}, 30_000);

const runtime = "Deno" in globalThis ? "deno" : "Bun" in globalThis ? "bun" : "node";
const emit = (tag: "READY", payload: Record<string, unknown>): void =>
  console.log(`${tag} ${JSON.stringify({ ...payload, runtime })}`);
const forever = new Promise<never>(() => {});
let reach: () => void = () => {};
const reached = new Promise<void>((resolve) => (reach = resolve));

/** Calls `onStart` with each stream's 1-based number. */
function watched(inner: Gateway, onStart: (n: number) => void): Gateway {
  let started = 0;
  return {
    info: inner.info,
    stream(
      request: ProviderRequest,
      options: { signal: AbortSignal },
    ): AsyncIterable<ProviderEvent> {
      onStart(++started);
      return inner.stream(request, options);
    },
  };
}

const hangs = scenario !== "approval";
const write = defineTool({
  name: "guarded_write",
  description: "Appends a line to the side file",
  input: z.object({ line: z.string() }),
  effect: scenario === "graceful_read" || scenario === "secret_echo" ? "read" : "write",
  permission: ["graceful", "graceful_read", "secret_echo"].includes(scenario) ? "allow" : "ask",
  execute: async ({ line }) => {
    appendFileSync(sideFile, `${line}\n`);
    if (!hangs) return `ok: ${line}`;
    reach();
    return await forever; // ignores its signal, like a stuck handler
  },
});
let steps: ScriptStep[] = [{ toolCalls: [{ name: "guarded_write", arguments: { line: "once" } }] }];
let onStart = (_n: number): void => {};
if (scenario === "secret") {
  steps = [
    {
      toolCalls: [{
        name: "ask_user",
        arguments: { questions: [{ id: "pw", prompt: "Password?", secret: true }] },
      }],
    },
    { hang: true },
  ];
  onStart = (n) => n === 2 && reach();
} else if (scenario === "secret_echo") {
  steps = [
    {
      toolCalls: [{
        name: "ask_user",
        arguments: { questions: [{ id: "pw", prompt: "Password?", secret: true }] },
      }],
    },
    {
      text: `Using ${ECHOED} now.`,
      toolCalls: [{ name: "guarded_write", arguments: { line: ECHOED } }],
    },
  ];
}
const agent = defineAgent({
  id: "interaction-child",
  systemPrompt: "Crash test.",
  gateway: watched(scriptedGateway(steps), (n) => onStart(n)),
  tools: [write],
});
const host = await openHost({ store: await openStoreUrl(url) });
const threads = host.threads({ agent });
const { threadId } = await threads.create({ requestKey: "create" });
await threads.send({ threadId, requestKey: "send-1", input: { text: "go" } });

if (scenario === "approval") {
  const view = await threads.waitForIdle(threadId, { timeoutMs: 20_000 });
  emit("READY", { threadId, interactionId: view.pending[0]?.id });
} else if (scenario === "approved" || scenario === "secret") {
  const view = await threads.waitForIdle(threadId, { timeoutMs: 20_000 });
  const interactionId = view.pending[0].id;
  await threads.respond(
    scenario === "approved"
      ? { threadId, requestKey: "respond-1", interactionId, decision: "approve" }
      : {
        threadId,
        requestKey: "respond-1",
        interactionId,
        answers: [{ questionId: "pw", value: "SECRET-VALUE-k3y-7781" }],
      },
  );
  await reached;
  emit("READY", { threadId, interactionId });
} else if (scenario === "secret_echo") {
  const view = await threads.waitForIdle(threadId, { timeoutMs: 20_000 });
  const interactionId = view.pending[0].id;
  await threads.respond({
    threadId,
    requestKey: "respond-1",
    interactionId,
    answers: [{ questionId: "pw", value: ECHOED }],
  });
  await reached;
  emit("READY", { threadId, interactionId });
} else if (scenario === "graceful") {
  await reached;
  void threads.cancel({ threadId, requestKey: "cancel-1", mode: "graceful" });
  for (;;) {
    const view = await threads.view(threadId);
    if (view.status === "stopping") break;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  emit("READY", { threadId });
} else if (scenario === "graceful_read") {
  await reached;
  // The third wave: the stop request is durable and answered at once.
  const { view } = await threads.cancel({ threadId, requestKey: "cancel-1", mode: "graceful" });
  emit("READY", { threadId, stopping: view.stopping });
} else {
  throw new Error(`Unknown scenario: ${scenario}`);
}
await forever;
