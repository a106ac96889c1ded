/**
 * Turns Responses API stream events into normalised provider events.
 *
 * @module
 */
import type {
  CitedSource,
  HostedToolCall,
  ProviderEvent,
  Usage,
} from "../../src/provider/gateway.ts";
import { utf16Offset } from "./hosted_tools.ts";
import { ProviderError } from "../../src/provider/provider_error.ts";
import { classifyFailure } from "./failure_class.ts";
import { streamInterrupted } from "./provider_errors.ts";
import { replayableReasoning, responsesState } from "./openai_responses_state.ts";
import type { ReplayItemWire } from "./openai_responses_state.ts";

type Wire = Record<string, unknown>;

interface CallState {
  callId: string;
  sawDelta: boolean;
  ended: boolean;
}

/**
 * Normalises Responses usage into disjoint counts (`input_tokens` includes
 * cached tokens, so they are subtracted).
 *
 * @param usage the wire usage
 * @returns disjoint counts
 */
export function responsesUsage(usage: Wire): Usage {
  const out: Usage = {};
  const inputDetails = record(usage.input_tokens_details);
  const outputDetails = record(usage.output_tokens_details);
  const cached = num(inputDetails.cached_tokens);
  const input = num(usage.input_tokens);
  if (input !== undefined) out.inputTokens = input - (cached ?? 0);
  const output = num(usage.output_tokens);
  if (output !== undefined) out.outputTokens = output;
  if (cached !== undefined) out.cacheReadTokens = cached;
  const reasoning = num(outputDetails.reasoning_tokens);
  if (reasoning !== undefined) out.reasoningTokens = reasoning;
  return out;
}

/** Stateful parser for one response. */
export class ResponsesEventParser {
  #calls = new Map<string, CallState>();
  #reasoning: ReplayItemWire[] = [];
  #done = false;
  // Citations: where each text part starts in the step's text, and its text
  // so far (annotation indexes count characters of their part).
  #textLength = 0;
  #parts = new Map<string, { base: number; text: string }>();
  #sources: CitedSource[] = [];
  #cited = new Set<string>();
  #hosted: HostedToolCall[] = [];
  #stateKey: string;

  /** @param stateKey the gateway's state key, stamped into `finish.state` */
  constructor(stateKey: string) {
    this.#stateKey = stateKey;
  }

  /** Whether the terminal event arrived. */
  get done(): boolean {
    return this.#done;
  }

  /**
   * Feeds one parsed event.
   *
   * @param event the JSON payload of one SSE event
   * @returns the events it produces
   * @throws {ProviderError} for `response.failed`
   */
  push(event: unknown): ProviderEvent[] {
    if (this.#done || typeof event !== "object" || event === null) return [];
    const wire = event as Wire;
    switch (wire.type) {
      case "response.output_text.delta":
      case "response.refusal.delta":
        this.#partText(wire);
        return text(wire.delta, "text");
      case "response.output_text.annotation.added":
        this.#cite(wire.item_id, wire.content_index, record(wire.annotation));
        return [];
      case "response.reasoning_summary_text.delta":
      case "response.reasoning_text.delta":
        return text(wire.delta, "reasoning");
      case "response.reasoning_summary_part.added":
        // Separate summary parts the way the API separates paragraphs.
        return num(wire.summary_index) ? [{ type: "reasoning", delta: "\n\n" }] : [];
      case "response.output_item.added":
        return this.#itemAdded(record(wire.item), wire.item_id ?? record(wire.item).id);
      case "response.function_call_arguments.delta":
        return this.#argumentsDelta(wire.item_id, wire.delta);
      case "response.output_item.done":
        return this.#itemDone(record(wire.item));
      case "response.completed":
      case "response.incomplete":
        return this.#terminal(record(wire.response), wire.type);
      case "response.failed":
        throw failed(record(record(wire.response).error));
      default:
        return [];
    }
  }

  /**
   * Ends the response after the body is exhausted.
   *
   * @throws {ProviderError} `stream_interrupted` when no terminal event arrived
   */
  end(): void {
    if (!this.#done) throw streamInterrupted("the stream ended before response.completed");
  }

  #itemAdded(item: Wire, itemId: unknown): ProviderEvent[] {
    if (item.type !== "function_call" || typeof itemId !== "string") return [];
    const callId = typeof item.call_id === "string" ? item.call_id : itemId;
    if (typeof item.name !== "string") throw streamInterrupted("a function call has no name");
    this.#calls.set(itemId, { callId, sawDelta: false, ended: false });
    return [{ type: "tool-call-start", callId, name: item.name }];
  }

  #argumentsDelta(itemId: unknown, delta: unknown): ProviderEvent[] {
    const call = typeof itemId === "string" ? this.#calls.get(itemId) : undefined;
    if (call === undefined || call.ended || typeof delta !== "string" || delta === "") return [];
    call.sawDelta = true;
    return [{ type: "tool-call-delta", callId: call.callId, argumentsDelta: delta }];
  }

  #itemDone(item: Wire): ProviderEvent[] {
    if (item.type === "web_search_call") {
      this.#hostedSearch(item);
      return [];
    }
    if (item.type === "message" && Array.isArray(item.content)) {
      item.content.forEach((part: unknown, index: number) => {
        const annotations = record(part).annotations;
        if (!Array.isArray(annotations)) return;
        for (const annotation of annotations) this.#cite(item.id, index, record(annotation));
      });
      return [];
    }
    if (item.type === "reasoning") {
      const replay = replayableReasoning(item);
      if (replay) this.#reasoning.push(replay);
      return [];
    }
    const call = typeof item.id === "string" ? this.#calls.get(item.id) : undefined;
    if (item.type !== "function_call" || call === undefined || call.ended) return [];
    call.ended = true;
    const events: ProviderEvent[] = [];
    // Servers that skip argument deltas still send the whole arguments here.
    if (!call.sawDelta && typeof item.arguments === "string" && item.arguments !== "") {
      events.push({ type: "tool-call-delta", callId: call.callId, argumentsDelta: item.arguments });
    }
    events.push({ type: "tool-call-end", callId: call.callId });
    return events;
  }

  #terminal(response: Wire, type: unknown): ProviderEvent[] {
    this.#done = true;
    const events: ProviderEvent[] = [];
    for (const call of this.#calls.values()) {
      if (!call.ended) {
        call.ended = true;
        events.push({ type: "tool-call-end", callId: call.callId });
      }
    }
    if (typeof response.usage === "object" && response.usage !== null) {
      events.push({ type: "usage", usage: responsesUsage(record(response.usage)) });
    }
    let reason: "stop" | "tool_calls" | "length" | "content_filter" = this.#calls.size > 0
      ? "tool_calls"
      : "stop";
    if (type === "response.incomplete") {
      reason = record(response.incomplete_details).reason === "content_filter"
        ? "content_filter"
        : "length";
    }
    const finish: ProviderEvent & { type: "finish" } = {
      type: "finish",
      reason,
      state: responsesState(this.#stateKey, this.#reasoning),
    };
    if (this.#hosted.length > 0) finish.hosted = this.#hosted;
    if (this.#sources.length > 0) finish.sources = this.#sources;
    events.push(finish);
    return events;
  }

  /** Counts a text delta: where its part starts in the step's text, and the part's text. */
  #partText(wire: Wire): void {
    if (typeof wire.delta !== "string") return;
    const key = `${String(wire.item_id)}:${String(wire.content_index ?? 0)}`;
    let part = this.#parts.get(key);
    if (!part) this.#parts.set(key, part = { base: this.#textLength, text: "" });
    part.text += wire.delta;
    this.#textLength += wire.delta.length;
  }

  /** A `url_citation` annotation of a text part, as a source with its range in the step's text. */
  #cite(itemId: unknown, contentIndex: unknown, annotation: Wire): void {
    if (annotation.type !== "url_citation" || typeof annotation.url !== "string") return;
    const source: CitedSource = { url: annotation.url };
    if (typeof annotation.title === "string" && annotation.title) source.title = annotation.title;
    const part = this.#parts.get(`${String(itemId)}:${String(contentIndex ?? 0)}`);
    const start = num(annotation.start_index);
    const end = num(annotation.end_index);
    if (part && start !== undefined && end !== undefined && end >= start) {
      source.start = part.base + utf16Offset(part.text, start);
      source.end = part.base + utf16Offset(part.text, end);
    }
    // The same annotation comes in its own event and again in the finished message.
    const key = `${source.url}|${source.start}|${source.end}`;
    if (this.#cited.has(key)) return;
    this.#cited.add(key);
    this.#sources.push(source);
  }

  /** A finished `web_search_call` item: its query, status and any sources it lists. */
  #hostedSearch(item: Wire): void {
    if (typeof item.id !== "string" || item.id === "") return;
    const action = record(item.action);
    const call: HostedToolCall = {
      callId: item.id,
      name: "web_search",
      status: item.status === "completed" ? "completed" : "error",
    };
    const queries = Array.isArray(action.queries)
      ? action.queries.filter((query): query is string => typeof query === "string")
      : [];
    if (typeof action.query === "string") call.query = action.query;
    else if (queries.length > 0) call.query = queries.join("\n");
    else if (typeof action.url === "string") call.query = action.url;
    if (Array.isArray(action.sources)) {
      call.results = action.sources
        .map(record)
        .filter((source) => typeof source.url === "string")
        .map((source) => ({ url: source.url as string }));
    }
    this.#hosted.push(call);
    // Replayed in its place, so a reasoning item before it keeps its following item.
    this.#reasoning.push({
      type: "web_search_call",
      id: item.id,
      status: typeof item.status === "string" ? item.status : "completed",
      action,
    });
  }
}

function failed(error: Wire): ProviderError {
  const code = typeof error.code === "string" ? error.code : undefined;
  const message = typeof error.message === "string" ? error.message : "response failed";
  const advice = classifyFailure({ code, message });
  return new ProviderError(`OpenAI response failed${code ? ` (${code})` : ""}: ${message}`, {
    ...advice,
    providerCode: code,
    body: JSON.stringify(error),
  });
}

function text(delta: unknown, type: "text" | "reasoning"): ProviderEvent[] {
  return typeof delta === "string" && delta !== "" ? [{ type, delta }] : [];
}

function record(value: unknown): Wire {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? value as Wire : {};
}

function num(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}
