// Shared by examples/openai.ts and examples/anthropic.ts: one tool-using
// exchange through the engine, printed item by item.
import { z } from "zod";
import { defineAgent, defineTool, memoryStore, openHost } from "@floret/engine";
import type { Gateway } from "@floret/engine";

const weather = defineTool({
  name: "get_weather",
  description: "Current weather for a city, in degrees Celsius.",
  input: z.object({ city: z.string() }),
  effect: "read",
  // A fixed answer keeps the example about the gateway, not about a weather API.
  execute: ({ city }) => JSON.stringify({ city, celsius: 21, sky: "clear" }),
});

/** Runs one turn that should call the tool once, and prints what happened. */
export async function liveExchange(gateway: Gateway): Promise<void> {
  console.log(`Talking to ${gateway.info.provider} (${gateway.info.model}).`);
  const host = await openHost({
    store: memoryStore(),
    onEvent: (event) => {
      if (event.type.startsWith("provider") || event.type.startsWith("retry")) {
        console.log("  event:", event.type);
      }
    },
  });
  try {
    const agent = defineAgent({
      id: "weather",
      systemPrompt: "Answer in one sentence. Use the get_weather tool for weather questions.",
      gateway,
      tools: [weather],
    });
    const threads = host.threads({ agent });
    const { threadId } = await threads.create({ requestKey: "example-thread" });
    await threads.send({
      threadId,
      requestKey: "example-send",
      input: { text: "What is the weather in Paris?" },
    });
    const view = await threads.waitForIdle(threadId, { timeoutMs: 120_000 });
    for (const item of view.items) {
      if (item.tool) {
        console.log(
          `[${item.kind}] ${item.tool.name}(${item.tool.arguments}) -> ${
            item.tool.output ?? item.tool.status
          }`,
        );
      } else console.log(`[${item.kind}] ${item.text ?? ""}`);
    }
    const turn = view.turns.at(-1);
    console.log(
      `turn ${turn?.outcome ?? "unknown"}${
        turn?.failure ? `: ${turn.failure.code} ${turn.failure.message}` : ""
      }`,
    );
  } finally {
    await host.shutdown();
  }
}
