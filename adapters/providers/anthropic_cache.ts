/**
 * Anthropic prompt caching: `cache_control` breakpoints on the stable parts of
 * a request, so the next request of the same conversation reads its prefix
 * from the cache instead of paying for it again.
 *
 * @module
 */
import type { AnthropicWireBlock, AnthropicWireRequest } from "./anthropic_request.ts";

/** The only cache type the API offers (five minutes, renewed on every hit). */
export interface CacheControl {
  /** Ephemeral: kept for a few minutes after its last use. */
  type: "ephemeral";
}

const EPHEMERAL: CacheControl = { type: "ephemeral" };

/**
 * Marks up to three breakpoints (the API allows four): the end of the tool
 * list, the end of the system prompt and the newest message. The cache prefix
 * runs tools → system → messages, so each breakpoint caches everything before
 * it; the newest message's breakpoint is what the next step reads back.
 *
 * @param body the rendered request; changed in place
 */
export function markCacheBreakpoints(body: AnthropicWireRequest): void {
  const lastTool = body.tools?.at(-1);
  if (lastTool) lastTool.cache_control = EPHEMERAL;
  if (typeof body.system === "string") {
    body.system = [{ type: "text", text: body.system, cache_control: EPHEMERAL }];
  }
  const newest = body.messages.at(-1);
  const block = newest && lastCacheable(newest.content);
  if (block) block.cache_control = EPHEMERAL;
}

/** Thinking blocks cannot carry a breakpoint; any other block can. */
function lastCacheable(
  blocks: AnthropicWireBlock[],
): Exclude<AnthropicWireBlock, { type: "thinking" | "redacted_thinking" }> | undefined {
  for (let i = blocks.length - 1; i >= 0; i--) {
    const block = blocks[i];
    if (block.type !== "thinking" && block.type !== "redacted_thinking") return block;
  }
  return undefined;
}
