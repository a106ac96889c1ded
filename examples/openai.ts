// One tool-using exchange against the real OpenAI API.
//
//   OPENAI_API_KEY=sk-… npx bun examples/openai.ts
//   OPENAI_API_KEY=sk-… OPENAI_API=responses OPENAI_MODEL=gpt-5-mini npx deno run -A examples/openai.ts
//   OPENAI_API_KEY=sk-… node --import tsx examples/openai.ts
//
// Without OPENAI_API_KEY it says so and exits successfully.
import process from "node:process";
import { openAIChat, openAIResponses } from "@floret/engine/openai";
import { liveExchange } from "./_live_exchange.ts";

const apiKey = process.env.OPENAI_API_KEY;
if (!apiKey) {
  console.log("OPENAI_API_KEY is not set: skipping the live OpenAI example.");
} else {
  const options = {
    model: process.env.OPENAI_MODEL ?? "gpt-4.1-mini",
    apiKey,
    baseURL: process.env.OPENAI_BASE_URL,
  };
  await liveExchange(
    process.env.OPENAI_API === "responses" ? openAIResponses(options) : openAIChat(options),
  );
}
