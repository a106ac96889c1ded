// The gateway conformance suite, run against the three HTTP gateways (driven
// by replayed recordings) and the scripted gateway.
import { gatewayConformance, scriptedGateway } from "@floret/engine/testing";
import type { ConformanceScenario } from "@floret/engine/testing";
import { loadRecording } from "./support/provider_fixtures.ts";
import { gatewayForRecording } from "./support/recording_gateways.ts";
import type { Gateway } from "@floret/engine";

/** One recording per scenario; `abort` replays the first half of the tool-call one and keeps the body open. */
const scenarios: Record<string, { text: string; tool_calls: string }> = {
  "openAIChat (replayed)": {
    text: "openai-chat-stream-text-usage.sse",
    tool_calls: "openai-chat-stream-parallel-tool-calls.sse",
  },
  "openAIChat non-streamed reply (replayed)": {
    text: "openai-chat-stream-finish-length.sse",
    tool_calls: "openai-chat-nonstream-parallel-tool-calls.json",
  },
  "openAIChat DeepSeek (replayed)": {
    text: "deepseek-stream-reasoning-content.sse",
    tool_calls: "deepseek-stream-reasoning-tool-call.chunks.jsonl",
  },
  "openAIResponses (replayed)": {
    text: "openai-responses-stream-reasoning-summary.sse",
    tool_calls: "openai-responses-stream-reasoning-text-function-call.sse",
  },
  "anthropicMessages (replayed)": {
    text: "anthropic-stream-thinking-text.sse",
    tool_calls: "anthropic-stream-parallel-tool-use.sse",
  },
};

function replayed(names: { text: string; tool_calls: string }) {
  return (scenario: ConformanceScenario): Gateway => {
    if (scenario === "text") return gatewayForRecording(loadRecording(names.text));
    const recording = loadRecording(names.tool_calls);
    if (scenario === "tool_calls") return gatewayForRecording(recording);
    return gatewayForRecording(recording, {
      body: recording.body.slice(0, Math.floor(recording.body.length / 2)),
      hang: true,
    });
  };
}

for (const [name, names] of Object.entries(scenarios)) {
  gatewayConformance(name, replayed(names));
}

gatewayConformance("scriptedGateway", (scenario) =>
  scriptedGateway([
    scenario === "text"
      ? { text: "Sunny in Paris.", reasoning: "Just answer." }
      : scenario === "tool_calls"
      ? {
        toolCalls: [
          { name: "get_weather", arguments: { city: "Paris" } },
          { name: "get_weather", arguments: { city: "Lyon" } },
        ],
      }
      : { hang: true, text: "Let me think" },
  ]));
