// Your first Floret program: offline, no API key, no database file.
//   npx tsx examples/first.ts      (or: npm run first)
import process from "node:process";
import { z } from "zod";
import { defineAgent, defineTool, memoryStore, openHost } from "@floret/engine";
import { scriptedGateway } from "@floret/engine/testing";

const add = defineTool({
  name: "add",
  description: "Add two numbers",
  input: z.object({ a: z.number(), b: z.number() }),
  execute: ({ a, b }) => String(a + b),
});
// A scripted model stands in for a real one: first it calls the tool, then it answers.
const gateway = scriptedGateway([
  { toolCalls: [{ name: "add", arguments: { a: 2, b: 3 } }] },
  { text: "2 + 3 = 5" },
]);

const host = await openHost({ store: memoryStore() });
const threads = host.threads({
  agent: defineAgent({ id: "calculator", systemPrompt: "You add numbers.", gateway, tools: [add] }),
});
const { threadId } = await threads.create({ requestKey: "first:create" });
await threads.send({ threadId, requestKey: "first:send", input: { text: "What is 2 + 3?" } });
const view = await threads.waitForIdle(threadId); // the model runs in the background until here
await host.shutdown();

const turn = view.turns.at(-1);
const answer = view.items.findLast((item) => item.kind === "assistant");
console.log(`answer: ${answer?.text ?? "(none)"}`);
if (turn?.outcome !== "completed") {
  console.error(
    `the turn failed: ${turn?.failure?.code ?? view.status}`,
    turn?.failure?.message ?? "",
  );
  process.exitCode = 1;
}
