/**
 * Turns Chat Completions stream chunks into normalised provider events.
 *
 * @module
 */
import type { FinishReason, ProviderEvent, Usage } from "../../src/provider/gateway.ts";
import { streamInterrupted } from "./provider_errors.ts";

/** The fields of a chunk this parser reads; everything is optional on the wire. */
interface ChunkWire {
  choices?: {
    index?: number;
    delta?: {
      content?: string | null;
      refusal?: string | null;
      reasoning_content?: string | null;
      reasoning?: string | null;
      tool_calls?: ToolCallWire[] | null;
    } | null;
    finish_reason?: string | null;
  }[];
  usage?: ChatUsageWire | null;
}

interface ToolCallWire {
  index?: number;
  id?: string | null;
  function?: { name?: string | null; arguments?: string | null } | null;
}

/** Chat Completions usage, including DeepSeek's cache fields. */
export interface ChatUsageWire {
  prompt_tokens?: number;
  completion_tokens?: number;
  prompt_tokens_details?: { cached_tokens?: number } | null;
  completion_tokens_details?: { reasoning_tokens?: number } | null;
  prompt_cache_hit_tokens?: number;
}

interface CallState {
  callId?: string;
  name?: string;
  started: boolean;
  pending: string;
}

/**
 * Normalises chat usage into disjoint counts: OpenAI's `prompt_tokens`
 * includes cached tokens, so they are subtracted.
 *
 * @param usage the wire usage
 * @returns disjoint counts
 */
export function chatUsage(usage: ChatUsageWire): Usage {
  const cached = usage.prompt_tokens_details?.cached_tokens ?? usage.prompt_cache_hit_tokens;
  const out: Usage = {};
  if (typeof usage.prompt_tokens === "number") {
    out.inputTokens = usage.prompt_tokens - (cached ?? 0);
  }
  if (typeof usage.completion_tokens === "number") out.outputTokens = usage.completion_tokens;
  if (typeof cached === "number") out.cacheReadTokens = cached;
  const reasoning = usage.completion_tokens_details?.reasoning_tokens;
  if (typeof reasoning === "number") out.reasoningTokens = reasoning;
  return out;
}

const FINISH: Record<string, FinishReason> = {
  stop: "stop",
  tool_calls: "tool_calls",
  function_call: "tool_calls",
  length: "length",
  content_filter: "content_filter",
};

/**
 * Stateful parser for one response. Finish is held back until the stream
 * ends because OpenAI sends usage in a chunk after `finish_reason`.
 */
export class ChatEventParser {
  #calls = new Map<number, CallState>();
  #order: CallState[] = [];
  #finish: string | undefined;

  /**
   * Feeds one parsed chunk.
   *
   * @param chunk the JSON payload of one SSE event
   * @returns the events it produces
   */
  push(chunk: unknown): ProviderEvent[] {
    const events: ProviderEvent[] = [];
    if (typeof chunk !== "object" || chunk === null) return events;
    const wire = chunk as ChunkWire;
    for (const choice of wire.choices ?? []) {
      if ((choice.index ?? 0) !== 0) continue;
      const delta = choice.delta ?? {};
      const reasoning = delta.reasoning_content ?? delta.reasoning;
      if (typeof reasoning === "string" && reasoning !== "") {
        events.push({ type: "reasoning", delta: reasoning });
      }
      if (typeof delta.content === "string" && delta.content !== "") {
        events.push({ type: "text", delta: delta.content });
      }
      if (typeof delta.refusal === "string" && delta.refusal !== "") {
        events.push({ type: "text", delta: delta.refusal });
      }
      for (const call of delta.tool_calls ?? []) this.#toolCall(call, events);
      if (choice.finish_reason) this.#finish = choice.finish_reason;
    }
    if (wire.usage) events.push({ type: "usage", usage: chatUsage(wire.usage) });
    return events;
  }

  /**
   * Ends the response after the body is exhausted.
   *
   * @returns the remaining tool-call ends and the one finish
   * @throws {ProviderError} `stream_interrupted` when no finish reason arrived
   */
  end(): ProviderEvent[] {
    if (this.#finish === undefined) {
      throw streamInterrupted("the stream ended without a finish reason");
    }
    const events: ProviderEvent[] = [];
    for (const call of this.#order) {
      if (!call.started) {
        throw streamInterrupted("a tool call ended without a name or id");
      }
      events.push({ type: "tool-call-end", callId: call.callId as string });
    }
    let reason = FINISH[this.#finish] ?? "stop";
    // Some compatible servers report "stop" even when the answer is tool calls.
    if (reason === "stop" && this.#order.length > 0) reason = "tool_calls";
    events.push({ type: "finish", reason });
    return events;
  }

  #toolCall(call: ToolCallWire, events: ProviderEvent[]): void {
    const index = call.index ?? this.#order.length;
    let state = this.#calls.get(index);
    if (state === undefined) {
      state = { started: false, pending: "" };
      this.#calls.set(index, state);
      this.#order.push(state);
    }
    if (call.id) state.callId ??= call.id;
    if (call.function?.name) state.name ??= call.function.name;
    const args = call.function?.arguments ?? "";
    if (!state.started) {
      state.pending += args;
      if (state.callId !== undefined && state.name !== undefined) {
        state.started = true;
        events.push({ type: "tool-call-start", callId: state.callId, name: state.name });
        if (state.pending !== "") {
          events.push({
            type: "tool-call-delta",
            callId: state.callId,
            argumentsDelta: state.pending,
          });
        }
        state.pending = "";
      }
    } else if (args !== "") {
      events.push({
        type: "tool-call-delta",
        callId: state.callId as string,
        argumentsDelta: args,
      });
    }
  }
}

/**
 * Turns a non-streamed `chat.completion` (some compatible servers ignore
 * `stream: true`) into the one chunk that carries the same content.
 *
 * @param completion the JSON body
 * @returns a chunk for {@link ChatEventParser.push}
 */
export function completionAsChunk(completion: unknown): unknown {
  if (typeof completion !== "object" || completion === null) return completion;
  const body = completion as {
    choices?: { index?: number; message?: Record<string, unknown>; finish_reason?: string }[];
    usage?: unknown;
  };
  return {
    usage: body.usage,
    choices: (body.choices ?? []).map((choice) => {
      const message = choice.message ?? {};
      const calls = Array.isArray(message.tool_calls) ? message.tool_calls : [];
      return {
        index: choice.index,
        finish_reason: choice.finish_reason,
        delta: {
          ...message,
          tool_calls: calls.map((call: unknown, index: number) => ({
            ...(call as Record<string, unknown>),
            index,
          })),
        },
      };
    }),
  };
}
