/**
 * The engine's synchronous token estimate of a request. It needs no
 * tokenizer, so it runs on every step at no cost, and it leans high: every
 * message pays a framing allowance, tool calls and images a flat one.
 *
 * @module
 */
import type { ProviderMessage, ProviderTool } from "../provider/gateway.ts";
import { roughTokenCount } from "../provider/rough_token_count.ts";

/** Framing per message (role markers, content wrappers). */
export const MESSAGE_FRAMING_TOKENS = 8;
/** Framing per tool definition. */
export const TOOL_FRAMING_TOKENS = 16;
/**
 * Flat cost of one image; the same figure as `IMAGE_TOKENS` of
 * `@floret/engine/tokens`, repeated so the core never loads that entry.
 */
export const IMAGE_TOKENS = 1600;
/** Text providers add to every request on their own (reply priming and the like). */
export const REQUEST_OVERHEAD_TOKENS = 64;

/** The estimated tokens of one provider message. */
export function messageTokens(message: ProviderMessage): number {
  let tokens = MESSAGE_FRAMING_TOKENS +
    roughTokenCount(message.role === "tool" ? "" : message.text);
  switch (message.role) {
    case "system":
      break;
    case "user":
      tokens += (message.attachments?.length ?? 0) * IMAGE_TOKENS;
      break;
    case "assistant":
      if (message.reasoning) tokens += roughTokenCount(message.reasoning);
      for (const call of message.toolCalls ?? []) {
        tokens += MESSAGE_FRAMING_TOKENS + roughTokenCount(call.name) +
          roughTokenCount(call.arguments) + roughTokenCount(call.callId);
      }
      break;
    case "tool":
      tokens += roughTokenCount(message.output) + roughTokenCount(message.name) +
        roughTokenCount(message.callId);
      break;
    default: {
      const never: never = message;
      throw new Error(`Unknown message role ${(never as { role: string }).role}`);
    }
  }
  return tokens;
}

/** The estimated tokens of a request's tool definitions. */
export function toolTokens(tools: readonly ProviderTool[], toolsJson: string): number {
  return tools.length === 0 ? 0 : roughTokenCount(toolsJson) + tools.length * TOOL_FRAMING_TOKENS;
}
