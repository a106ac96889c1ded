/**
 * The opaque state the Responses gateway returns in `finish.state` and reads
 * back from assistant messages: the reasoning items to replay.
 *
 * @module
 */

/** A reasoning item as the Responses API returns it and accepts it back. */
export interface ReasoningItemWire {
  /** Always `reasoning`. */
  type: "reasoning";
  /** The item id (`rs_…`). */
  id: string;
  /** The encrypted reasoning; without `store`, replay needs it. */
  encrypted_content: string;
  /** The summary parts, replayed as received. */
  summary: { type: "summary_text"; text: string }[];
}

/**
 * A hosted web search call as the Responses API returns it and accepts it
 * back: replayed in its place among the reasoning items, since a reasoning
 * item must be followed by the item it led to.
 */
export interface WebSearchCallWire {
  /** Always `web_search_call`. */
  type: "web_search_call";
  /** The item id (`ws_…`). */
  id: string;
  /** How the search ended. */
  status: string;
  /** What it did (`{ type: "search", query, … }`). */
  action: Record<string, unknown>;
}

/** An output item replayed from state. */
export type ReplayItemWire = ReasoningItemWire | WebSearchCallWire;

/**
 * JSON-serialisable state for one assistant message. `v` versions the shape;
 * `key` is the gateway's state key, so state from another model or account is
 * ignored even if the engine passes it along.
 */
export interface ResponsesState {
  /** Shape version. */
  v: 1;
  /** Protocol tag. */
  protocol: "openai-responses";
  /** The state key of the gateway that produced it. */
  key: string;
  /** Reasoning items in output order, with the hosted search calls between them. */
  reasoning: ReplayItemWire[];
}

/**
 * Builds the state for a finished response, or nothing when there is nothing
 * to replay.
 *
 * @param key the gateway's state key
 * @param reasoning the reasoning items seen
 * @returns the state, or undefined
 */
export function responsesState(
  key: string,
  reasoning: ReplayItemWire[],
): ResponsesState | undefined {
  return reasoning.length === 0
    ? undefined
    : { v: 1, protocol: "openai-responses", key, reasoning };
}

/**
 * Reads the reasoning items back from a message's state, ignoring state of
 * another shape or key.
 *
 * @param state what the engine stored with the assistant message
 * @param key this gateway's state key
 * @returns the items to replay, possibly none
 */
export function reasoningToReplay(state: unknown, key: string): ReplayItemWire[] {
  if (typeof state !== "object" || state === null) return [];
  const candidate = state as Partial<ResponsesState>;
  if (candidate.v !== 1 || candidate.protocol !== "openai-responses" || candidate.key !== key) {
    return [];
  }
  if (!Array.isArray(candidate.reasoning)) return [];
  return candidate.reasoning.filter((item): item is ReplayItemWire =>
    typeof item === "object" && item !== null && typeof item.id === "string" &&
    (item.type === "reasoning"
      ? typeof item.encrypted_content === "string" && Array.isArray(item.summary)
      : item.type === "web_search_call" && typeof item.status === "string" &&
        typeof item.action === "object" && item.action !== null)
  );
}

/**
 * Extracts a replayable reasoning item from an `output_item.done` item.
 *
 * @param item the item from the stream
 * @returns the item in replay form, or undefined when it has no encrypted content
 */
export function replayableReasoning(item: Record<string, unknown>): ReasoningItemWire | undefined {
  if (item.type !== "reasoning" || typeof item.id !== "string") return undefined;
  if (typeof item.encrypted_content !== "string" || item.encrypted_content === "") return undefined;
  const summary = Array.isArray(item.summary) ? item.summary : [];
  return {
    type: "reasoning",
    id: item.id,
    encrypted_content: item.encrypted_content,
    summary: summary
      .filter((part): part is { type: string; text: string } =>
        typeof part === "object" && part !== null && typeof part.text === "string"
      )
      .map((part) => ({ type: "summary_text", text: part.text })),
  };
}
