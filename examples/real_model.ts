// The first program against a real model; the key you set picks the provider.
//   OPENAI_API_KEY=sk-... npx tsx examples/real_model.ts
//   ANTHROPIC_API_KEY=sk-ant-... npx tsx examples/real_model.ts
import process from "node:process";
import { defineAgent, type Gateway, memoryStore, openHost } from "@floret/engine";
import { anthropicMessages } from "@floret/engine/anthropic";
import { openAIChat } from "@floret/engine/openai";

function chooseGateway(): Gateway {
  const { OPENAI_API_KEY, ANTHROPIC_API_KEY } = process.env;
  if (OPENAI_API_KEY) return openAIChat({ model: "gpt-4.1-mini", apiKey: OPENAI_API_KEY });
  if (ANTHROPIC_API_KEY) {
    return anthropicMessages({ model: "claude-haiku-4-5", apiKey: ANTHROPIC_API_KEY });
  }
  console.error("Set OPENAI_API_KEY or ANTHROPIC_API_KEY (examples/first.ts needs neither).");
  process.exit(2);
}

const host = await openHost({ store: memoryStore() });
const threads = host.threads({
  agent: defineAgent({
    id: "helper",
    systemPrompt: "Answer in one sentence.",
    gateway: chooseGateway(),
  }),
});
const { threadId } = await threads.create({ requestKey: "real:create" });
await threads.send({ threadId, requestKey: "real:send", input: { text: "Why is the sky blue?" } });
const view = await threads.waitForIdle(threadId, { timeoutMs: 120_000 });
await host.shutdown();

const turn = view.turns.at(-1);
console.log(view.items.findLast((item) => item.kind === "assistant")?.text ?? "(no answer)");
if (turn?.outcome !== "completed") {
  console.error(`failed: ${turn?.failure?.code ?? view.status}: ${turn?.failure?.message ?? ""}`);
  process.exitCode = 1;
}
