/**
 * The opaque state the Anthropic gateway returns in `finish.state` and reads
 * back from assistant messages: thinking blocks with their signatures.
 *
 * @module
 */

/** A thinking block as Anthropic returns it and accepts it back. */
export type ThinkingBlockWire =
  | { type: "thinking"; thinking: string; signature: string }
  | { type: "redacted_thinking"; data: string };

/**
 * JSON-serialisable state for one assistant message. `v` versions the shape;
 * `key` is the gateway's state key, so signatures from another model or
 * account are never sent back.
 */
export interface AnthropicState {
  /** Shape version. */
  v: 1;
  /** Protocol tag. */
  protocol: "anthropic-messages";
  /** The state key of the gateway that produced it. */
  key: string;
  /** Thinking blocks in output order. */
  thinking: ThinkingBlockWire[];
}

/**
 * Builds the state for a finished message, or nothing when there is nothing
 * to replay.
 *
 * @param key the gateway's state key
 * @param thinking the signed thinking blocks seen
 * @returns the state, or undefined
 */
export function anthropicState(
  key: string,
  thinking: ThinkingBlockWire[],
): AnthropicState | undefined {
  return thinking.length === 0
    ? undefined
    : { v: 1, protocol: "anthropic-messages", key, thinking };
}

/**
 * Reads the thinking blocks back from a message's state, ignoring state of
 * another shape or key.
 *
 * @param state what the engine stored with the assistant message
 * @param key this gateway's state key
 * @returns the blocks to replay, possibly none
 */
export function thinkingToReplay(state: unknown, key: string): ThinkingBlockWire[] {
  if (typeof state !== "object" || state === null) return [];
  const candidate = state as Partial<AnthropicState>;
  if (candidate.v !== 1 || candidate.protocol !== "anthropic-messages" || candidate.key !== key) {
    return [];
  }
  if (!Array.isArray(candidate.thinking)) return [];
  return candidate.thinking.filter((block): block is ThinkingBlockWire => {
    if (typeof block !== "object" || block === null) return false;
    if (block.type === "thinking") {
      return typeof block.thinking === "string" && typeof block.signature === "string";
    }
    return block.type === "redacted_thinking" && typeof block.data === "string";
  });
}
