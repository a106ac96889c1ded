/**
 * Turns Anthropic Messages stream events into normalised provider events.
 *
 * @module
 */
import type { FinishReason, ProviderEvent, Usage } from "../../src/provider/gateway.ts";
import { streamInterrupted } from "./provider_errors.ts";
import { anthropicState } from "./anthropic_state.ts";
import type { ThinkingBlockWire } from "./anthropic_state.ts";

type Wire = Record<string, unknown>;

type Block =
  | { type: "text" }
  | { type: "tool_use"; callId: string; ended: boolean; sawDelta: boolean; startInput: string }
  | { type: "thinking"; thinking: string; signature: string }
  | { type: "other" };

const FINISH: Record<string, FinishReason> = {
  end_turn: "stop",
  stop_sequence: "stop",
  tool_use: "tool_calls",
  max_tokens: "length",
  model_context_window_exceeded: "length",
  // A paused server-tool turn wants to be continued, which is what the engine does for `length`.
  pause_turn: "length",
  refusal: "content_filter",
};

/**
 * Normalises Anthropic usage; its counts are already disjoint. Only fields
 * present are set, because `message_delta` may repeat just some of them.
 *
 * @param usage the wire usage
 * @returns the counts
 */
export function anthropicUsage(usage: Wire): Usage {
  const out: Usage = {};
  const set = (key: keyof Usage, value: unknown): void => {
    if (typeof value === "number" && Number.isFinite(value)) out[key] = value;
  };
  set("inputTokens", usage.input_tokens);
  set("outputTokens", usage.output_tokens);
  set("cacheReadTokens", usage.cache_read_input_tokens);
  set("cacheWriteTokens", usage.cache_creation_input_tokens);
  set("reasoningTokens", record(usage.output_tokens_details).thinking_tokens);
  return out;
}

/** Stateful parser for one message. Unknown block types are skipped. */
export class AnthropicEventParser {
  #blocks = new Map<number, Block>();
  #thinking: ThinkingBlockWire[] = [];
  #stopReason: string | undefined;
  #done = false;
  #stateKey: string;

  /** @param stateKey the gateway's state key, stamped into `finish.state` */
  constructor(stateKey: string) {
    this.#stateKey = stateKey;
  }

  /** Whether `message_stop` arrived. */
  get done(): boolean {
    return this.#done;
  }

  /**
   * Feeds one parsed event.
   *
   * @param event the JSON payload of one SSE event
   * @returns the events it produces
   */
  push(event: unknown): ProviderEvent[] {
    if (this.#done || typeof event !== "object" || event === null) return [];
    const wire = event as Wire;
    switch (wire.type) {
      case "message_start": {
        const usage = record(record(wire.message).usage);
        return Object.keys(usage).length > 0
          ? [{ type: "usage", usage: anthropicUsage(usage) }]
          : [];
      }
      case "content_block_start":
        return this.#start(wire.index, record(wire.content_block));
      case "content_block_delta":
        return this.#delta(this.#blocks.get(num(wire.index)), record(wire.delta));
      case "content_block_stop":
        return this.#stop(num(wire.index));
      case "message_delta": {
        const reason = record(wire.delta).stop_reason;
        if (typeof reason === "string") this.#stopReason = reason;
        const usage = record(wire.usage);
        return Object.keys(usage).length > 0
          ? [{ type: "usage", usage: anthropicUsage(usage) }]
          : [];
      }
      case "message_stop":
        return this.#finish();
      default:
        return [];
    }
  }

  /**
   * Ends the message after the body is exhausted.
   *
   * @throws {ProviderError} `stream_interrupted` when `message_stop` never arrived
   */
  end(): void {
    if (!this.#done) throw streamInterrupted("the stream ended before message_stop");
  }

  #start(index: unknown, block: Wire): ProviderEvent[] {
    const at = num(index);
    switch (block.type) {
      case "text":
        this.#blocks.set(at, { type: "text" });
        return typeof block.text === "string" && block.text !== ""
          ? [{ type: "text", delta: block.text }]
          : [];
      case "tool_use": {
        if (typeof block.id !== "string" || typeof block.name !== "string") {
          throw streamInterrupted("a tool_use block has no id or name");
        }
        // Proxies that do not stream tool input send it whole here instead.
        const input = record(block.input);
        const startInput = Object.keys(input).length > 0 ? JSON.stringify(input) : "";
        this.#blocks.set(at, {
          type: "tool_use",
          callId: block.id,
          ended: false,
          sawDelta: false,
          startInput,
        });
        return [{ type: "tool-call-start", callId: block.id, name: block.name }];
      }
      case "thinking": {
        const thinking = typeof block.thinking === "string" ? block.thinking : "";
        this.#blocks.set(at, { type: "thinking", thinking, signature: "" });
        return thinking === "" ? [] : [{ type: "reasoning", delta: thinking }];
      }
      case "redacted_thinking":
        if (typeof block.data === "string") {
          this.#thinking.push({ type: "redacted_thinking", data: block.data });
        }
        this.#blocks.set(at, { type: "other" });
        return [];
      default:
        this.#blocks.set(at, { type: "other" });
        return [];
    }
  }

  #delta(block: Block | undefined, delta: Wire): ProviderEvent[] {
    if (block === undefined) return [];
    if (block.type === "text" && delta.type === "text_delta") return text(delta.text, "text");
    if (block.type === "tool_use" && delta.type === "input_json_delta" && !block.ended) {
      const part = delta.partial_json;
      if (typeof part === "string" && part !== "") block.sawDelta = true;
      return typeof part === "string" && part !== ""
        ? [{ type: "tool-call-delta", callId: block.callId, argumentsDelta: part }]
        : [];
    }
    if (
      block.type === "thinking" && delta.type === "thinking_delta" &&
      typeof delta.thinking === "string"
    ) {
      block.thinking += delta.thinking;
      return text(delta.thinking, "reasoning");
    }
    if (
      block.type === "thinking" && delta.type === "signature_delta" &&
      typeof delta.signature === "string"
    ) {
      block.signature += delta.signature;
      return [{ type: "reasoning", delta: "", signature: delta.signature }];
    }
    return [];
  }

  #stop(index: number): ProviderEvent[] {
    const block = this.#blocks.get(index);
    if (block?.type === "thinking" && block.signature !== "") {
      this.#thinking.push({
        type: "thinking",
        thinking: block.thinking,
        signature: block.signature,
      });
    }
    if (block?.type === "tool_use" && !block.ended) {
      block.ended = true;
      const events: ProviderEvent[] = [];
      if (!block.sawDelta && block.startInput !== "") {
        events.push({
          type: "tool-call-delta",
          callId: block.callId,
          argumentsDelta: block.startInput,
        });
      }
      events.push({ type: "tool-call-end", callId: block.callId });
      return events;
    }
    return [];
  }

  #finish(): ProviderEvent[] {
    if (this.#stopReason === undefined) {
      throw streamInterrupted("message_stop came without a stop reason");
    }
    this.#done = true;
    const events: ProviderEvent[] = [];
    // A block left open by the server still closes before the finish.
    for (const [index, block] of this.#blocks) {
      if (block.type === "tool_use" && !block.ended) events.push(...this.#stop(index));
    }
    const hasCalls = [...this.#blocks.values()].some((block) => block.type === "tool_use");
    let reason = FINISH[this.#stopReason] ?? "stop";
    if (reason === "stop" && hasCalls) reason = "tool_calls";
    events.push({ type: "finish", reason, state: anthropicState(this.#stateKey, this.#thinking) });
    return events;
  }
}

function text(delta: unknown, type: "text" | "reasoning"): ProviderEvent[] {
  return typeof delta === "string" && delta !== "" ? [{ type, delta }] : [];
}

function record(value: unknown): Wire {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? value as Wire : {};
}

function num(value: unknown): number {
  return typeof value === "number" ? value : -1;
}
