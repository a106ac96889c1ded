// Picks the gateway that speaks a recording's protocol, from its file name.
import type { Gateway } from "@floret/engine";
import { openAIChat, openAIResponses } from "@floret/engine/openai";
import { anthropicMessages } from "@floret/engine/anthropic";
import { loadRecording, replayFetch, splitResponses } from "./provider_fixtures.ts";
import type { Recording, ReplayOptions } from "./provider_fixtures.ts";

/** The API key used with replayed recordings; tests check it never leaks. */
export const REPLAY_KEY = "sk-replay-SECRET-0123456789abcdef";

/** A gateway that answers with `recording` (optionally cut, hung or with another body). */
export function gatewayForRecording(recording: Recording, options: ReplayOptions = {}): Gateway {
  const fetch = replayFetch(recording, [], options);
  const name = recording.name;
  if (name.startsWith("anthropic")) {
    return anthropicMessages({ model: "claude-test", apiKey: REPLAY_KEY, fetch });
  }
  if (name.startsWith("openai-responses")) {
    return openAIResponses({ model: "gpt-test", apiKey: REPLAY_KEY, fetch });
  }
  const provider = name.startsWith("deepseek")
    ? "deepseek"
    : name.startsWith("openrouter")
    ? "openrouter"
    : undefined;
  return openAIChat({ model: "chat-test", apiKey: REPLAY_KEY, provider, fetch });
}

/** Every successful-or-streamed recording (not the plain error bodies), multi-turn split per response. */
export const STREAM_RECORDINGS = [
  "anthropic-stream-max-tokens.sse",
  "anthropic-stream-parallel-tool-use.sse",
  "anthropic-stream-thinking-server-tool.sse",
  "anthropic-stream-thinking-text.sse",
  "anthropic-stream-thinking-tool-use.sse",
  "deepseek-stream-reasoning-content.sse",
  "deepseek-stream-reasoning-tool-call.chunks.jsonl",
  "openai-chat-nonstream-parallel-tool-calls.json",
  "openai-chat-nonstream-tool-calls.json",
  "openai-chat-stream-finish-length-no-content.sse",
  "openai-chat-stream-finish-length.sse",
  "openai-chat-stream-parallel-tool-calls-b.sse",
  "openai-chat-stream-parallel-tool-calls.sse",
  "openai-chat-stream-text-after-tool.sse",
  "openai-chat-stream-text-usage.sse",
  "openai-chat-stream-tool-call-fragmented.sse",
  "openai-responses-stream-function-call.sse",
  "openai-responses-stream-incomplete-max-output-tokens.sse",
  "openai-responses-stream-parallel-function-calls.sse",
  "openai-responses-stream-reasoning-multiturn.chunks.jsonl",
  "openai-responses-stream-reasoning-summary.sse",
  "openai-responses-stream-reasoning-text-function-call.sse",
  "openai-responses-stream-text.sse",
  "openrouter-chat-stream-length-then-error.sse",
];

/** Loads the recordings above (the multi-turn one as four). */
export function loadStreamRecordings(): Recording[] {
  return STREAM_RECORDINGS.flatMap((name) =>
    name.includes("multiturn") ? splitResponses(name) : [loadRecording(name)]
  );
}
