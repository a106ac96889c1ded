/**
 * Floret quickstart: a durable agent on a libSQL file, with a tool, live
 * streaming through `subscribe`, and the settled view at the end.
 *
 *   npm run demo            (runs this file with Bun)
 *
 * With OPENAI_API_KEY set it talks to a real model (OPENAI_MODEL, default
 * gpt-4.1-mini; OPENAI_BASE_URL for any compatible endpoint); without it, a
 * scripted model plays the same conversation.
 */
import { z } from "zod";
import { applyUpdate, defineAgent, defineTool, type Gateway, openHost } from "@floret/engine";
import { libsqlStore } from "@floret/engine/libsql";
import { scriptedGateway } from "@floret/engine/testing";

const dbPath = `${globalThis.process?.env?.TMPDIR ?? "/tmp"}/floret-quickstart-${Date.now()}.db`;
const apiKey = globalThis.process?.env?.OPENAI_API_KEY;

const weather = defineTool({
  name: "get_weather",
  description: "Current weather for a city (a canned demo answer).",
  input: z.object({ city: z.string().describe("City name") }),
  effect: "read",
  execute: ({ city }) => JSON.stringify({ city, temperatureC: city.length + 10, sky: "clear" }),
});

async function chooseGateway(): Promise<{ gateway: Gateway; label: string }> {
  if (apiKey) {
    const { openAIChat } = await import("@floret/engine/openai");
    const model = globalThis.process?.env?.OPENAI_MODEL ?? "gpt-4.1-mini";
    const baseURL = globalThis.process?.env?.OPENAI_BASE_URL;
    return {
      gateway: openAIChat({ model, apiKey, baseURL }),
      label: `real model ${model} (OPENAI_API_KEY is set)`,
    };
  }
  const gateway = scriptedGateway([
    {
      toolCalls: [{ name: "get_weather", arguments: { city: "Lisbon" } }, {
        name: "get_weather",
        arguments: { city: "Oslo" },
      }],
    },
    {
      text: "Lisbon is 16 °C and clear; Oslo is 14 °C and clear. Both are fine for a walk — " +
        "Lisbon is the warmer of the two.",
      reasoning: "Both tools answered; compare the temperatures.",
    },
  ]);
  return {
    gateway: typewriter(gateway),
    label: "scripted model (set OPENAI_API_KEY to use a real one)",
  };
}

/** Re-splits a scripted model's text into words with a short pause, so the demo visibly streams. */
function typewriter(inner: Gateway): Gateway {
  return {
    info: inner.info,
    async *stream(request, options) {
      for await (const event of inner.stream(request, options)) {
        if (event.type !== "text") {
          yield event;
          continue;
        }
        for (const word of event.delta.match(/\S+\s*|\s+/g) ?? []) {
          await new Promise((resolve) => setTimeout(resolve, 15));
          yield { type: "text", delta: word };
        }
      }
    },
  };
}

const { gateway, label } = await chooseGateway();
console.log(`Floret quickstart — ${label}`);
console.log(`Journal: libSQL file ${dbPath}\n`);

const host = await openHost({ store: libsqlStore({ url: `file:${dbPath}` }) });
const agent = defineAgent({
  id: "weather-demo",
  systemPrompt:
    "You answer weather questions. Use get_weather for every city you mention. Be brief.",
  gateway,
  tools: [weather],
});
const threads = host.threads({ agent });
const { threadId } = await threads.create({ requestKey: "quickstart:create", title: "Weather" });

// Subscribe first, then read the view: every change after it arrives as a batch, and
// applyUpdate folds each batch into the view (what view() would return at that version).
const controller = new AbortController();
const updates = threads.subscribe(threadId, { signal: controller.signal });
let live = await threads.view(threadId);
const printing = (async () => {
  for await (const update of updates) {
    if (update.type === "resync") {
      live = await threads.view(threadId);
      continue;
    }
    live = applyUpdate(live, update);
    for (const op of update.ops) {
      if (op.op === "add" && op.item.kind === "tool") {
        console.log(`  [tool] ${op.item.tool.name}(${op.item.tool.arguments})`);
      }
      if (op.op === "add" && op.item.kind === "assistant") write(`\nassistant: ${op.item.text}`);
      if (op.op === "append-text") {
        const item = live.items.find((candidate) => candidate.id === op.itemId);
        if (item?.kind === "assistant") write(op.text);
      }
    }
  }
})();

const question = "Is it warmer in Lisbon or in Oslo right now?";
console.log(`user: ${question}`);
await threads.send({ threadId, requestKey: "quickstart:send-1", input: { text: question } });
const view = await threads.waitForIdle(threadId, { timeoutMs: 120_000 });
controller.abort();
await printing;

console.log("\n\nSettled view from the journal:");
for (const item of view.items) {
  const body = item.kind === "tool"
    ? `${item.tool.name} → ${item.tool.status}: ${item.tool.output}`
    : item.kind === "interaction"
    ? `${item.interaction.kind} ${item.interaction.status}`
    : item.text;
  console.log(`  #${item.ordinal} ${item.kind.padEnd(9)} ${body}`);
}
const turn = view.turns.at(-1);
console.log(
  `Turn ${turn?.outcome}${
    turn?.failure ? ` (${turn.failure.code}: ${turn.failure.message})` : ""
  }.`,
);

await host.shutdown();

// Reopen the file: the conversation is all there.
const reopened = await openHost({ store: libsqlStore({ url: `file:${dbPath}` }) });
const again = await reopened.threads({ agent }).view(threadId);
console.log(`Reopened ${dbPath}: ${again.items.length} items, status ${again.status}.`);
await reopened.shutdown();

function write(text: string): void {
  globalThis.process?.stdout?.write(text);
}
