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
  /** Reasoning items in output order. */
  reasoning: ReasoningItemWire[];
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
  reasoning: ReasoningItemWire[],
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
export function reasoningToReplay(state: unknown, key: string): ReasoningItemWire[] {
  if (typeof state !== "object" || state === null) return [];
  const candidate = state as Partial<ResponsesState>;
  if (candidate.v !== 1 || candidate.protocol !== "openai-responses" || candidate.key !== key) {
    return [];
  }
  if (!Array.isArray(candidate.reasoning)) return [];
  return candidate.reasoning.filter((item): item is ReasoningItemWire =>
    typeof item === "object" && item !== null && item.type === "reasoning" &&
    typeof item.id === "string" && typeof item.encrypted_content === "string" &&
    Array.isArray(item.summary)
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
