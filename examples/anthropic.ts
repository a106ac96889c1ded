// One tool-using exchange against the real Anthropic API.
//
//   ANTHROPIC_API_KEY=sk-ant-… npx bun examples/anthropic.ts
//   ANTHROPIC_API_KEY=sk-ant-… ANTHROPIC_MODEL=claude-haiku-4-5 npx deno run -A examples/anthropic.ts
//   ANTHROPIC_API_KEY=sk-ant-… node --import tsx examples/anthropic.ts
//
// Without ANTHROPIC_API_KEY it says so and exits successfully.
import process from "node:process";
import { anthropicMessages } from "@floret/engine/anthropic";
import { liveExchange } from "./_live_exchange.ts";

const apiKey = process.env.ANTHROPIC_API_KEY;
if (!apiKey) {
  console.log("ANTHROPIC_API_KEY is not set: skipping the live Anthropic example.");
} else {
  await liveExchange(anthropicMessages({
    model: process.env.ANTHROPIC_MODEL ?? "claude-sonnet-5-5",
    apiKey,
    maxTokens: 1024,
  }));
}
