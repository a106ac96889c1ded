/**
 * Turns Anthropic Messages stream events into normalised provider events.
 *
 * @module
 */
import type {
  CitedSource,
  FinishReason,
  HostedToolCall,
  ProviderEvent,
  Usage,
} from "../../src/provider/gateway.ts";
import { streamInterrupted } from "./provider_errors.ts";
import { anthropicState } from "./anthropic_state.ts";
import type { ThinkingBlockWire } from "./anthropic_state.ts";

type Wire = Record<string, unknown>;

type Block =
  | { type: "text"; base: number; length: number; citations: { url: string; title?: string }[] }
  | { type: "server_tool"; input: string; call: HostedToolCall }
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
  // Hosted searches by their id, and the citations of the text blocks: a
  // citation covers its whole block, placed by where the block starts.
  #hosted = new Map<string, HostedToolCall>();
  #sources: CitedSource[] = [];
  #textLength = 0;
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
      case "text": {
        const first = typeof block.text === "string" ? block.text : "";
        const citations = Array.isArray(block.citations)
          ? block.citations.map(record).flatMap(webCitation)
          : [];
        this.#blocks.set(at, { type: "text", base: this.#textLength, length: 0, citations });
        return this.#text(this.#blocks.get(at), first);
      }
      case "server_tool_use": {
        // Only the hosted search is shown; other server tools stay internal.
        if (block.name !== "web_search" || typeof block.id !== "string") break;
        const call: HostedToolCall = { callId: block.id, name: "web_search", status: "completed" };
        const input = record(block.input);
        this.#blocks.set(at, {
          type: "server_tool",
          input: Object.keys(input).length > 0 ? JSON.stringify(input) : "",
          call,
        });
        this.#hosted.set(block.id, call);
        return [];
      }
      case "web_search_tool_result": {
        const call = typeof block.tool_use_id === "string"
          ? this.#hosted.get(block.tool_use_id)
          : undefined;
        if (call && Array.isArray(block.content)) {
          call.results = block.content.map(record)
            .filter((result) => typeof result.url === "string")
            .map((result) =>
              typeof result.title === "string"
                ? { url: result.url as string, title: result.title }
                : { url: result.url as string }
            );
        } else if (call) call.status = "error"; // { type: "web_search_tool_result_error", error_code }
        break;
      }
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
    }
    this.#blocks.set(at, { type: "other" });
    return [];
  }

  /** The citations of a finished text block, as sources over the block's range (once). */
  #cited(block: Block & { type: "text" }): void {
    for (const citation of block.citations.splice(0)) {
      const source = { ...citation, start: block.base, end: block.base + block.length };
      const seen = this.#sources.some((other) =>
        other.url === source.url && other.start === source.start && other.end === source.end
      );
      if (!seen) this.#sources.push(source);
    }
  }

  /** A text delta, counted so later citations know where their block starts. */
  #text(block: Block | undefined, delta: unknown): ProviderEvent[] {
    if (block?.type !== "text" || typeof delta !== "string" || delta === "") return [];
    block.length += delta.length;
    this.#textLength += delta.length;
    return [{ type: "text", delta }];
  }

  #delta(block: Block | undefined, delta: Wire): ProviderEvent[] {
    if (block === undefined) return [];
    if (block.type === "text" && delta.type === "text_delta") return this.#text(block, delta.text);
    if (block.type === "text" && delta.type === "citations_delta") {
      block.citations.push(...webCitation(record(delta.citation)));
      return [];
    }
    if (block.type === "server_tool" && delta.type === "input_json_delta") {
      if (typeof delta.partial_json === "string") block.input += delta.partial_json;
      return [];
    }
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
    if (block?.type === "text") this.#cited(block);
    if (block?.type === "server_tool") {
      try {
        const query = (JSON.parse(block.input || "{}") as { query?: unknown }).query;
        if (typeof query === "string") block.call.query = query;
      } catch {
        // a query cut off by the stream: the call is still shown, without it
      }
    }
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
    const finish: ProviderEvent & { type: "finish" } = {
      type: "finish",
      reason,
      state: anthropicState(this.#stateKey, this.#thinking),
    };
    // A text block the server never closed still has its citations.
    for (const block of this.#blocks.values()) if (block.type === "text") this.#cited(block);
    if (this.#hosted.size > 0) finish.hosted = [...this.#hosted.values()];
    if (this.#sources.length > 0) finish.sources = this.#sources;
    events.push(finish);
    return events;
  }
}

/** A web search citation of a text block (`web_search_result_location`), as url and title. */
function webCitation(citation: Wire): { url: string; title?: string }[] {
  if (citation.type !== "web_search_result_location" || typeof citation.url !== "string") {
    return [];
  }
  return [
    typeof citation.title === "string" && citation.title
      ? { url: citation.url, title: citation.title }
      : { url: citation.url },
  ];
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
