/**
 * Input-token estimation for a provider request: exact for OpenAI model
 * families (their encodings are public), conservative for everyone else.
 *
 * @module
 */

import type { ProviderMessage, ProviderRequest, ProviderTool } from "../../src/provider/gateway.ts";
import { openAIToolText } from "./openai_tool_text.ts";
import { loadTokenCounter } from "./tokenizer_loader.ts";
import type { TokenCounter } from "./tokenizer_loader.ts";
import { tokenizerForModel, type TokenizerName } from "./tokenizer_choice.ts";

/** What {@link estimateTokens} found. */
export interface TokenEstimate {
  /** The input tokens the request is expected to cost. */
  tokens: number;
  /** The tokenizer behind the count; `estimate` means the conservative estimate. */
  tokenizer: TokenizerName;
  /** Tokens of the messages, framing included, images excluded. */
  messageTokens: number;
  /** Tokens of the tool definitions, framing included. */
  toolTokens: number;
  /** Tokens charged for image attachments. */
  imageTokens: number;
  /** How many image attachments were counted. */
  imageCount: number;
}

/**
 * OpenAI chat framing: every message costs 3 tokens around its role and
 * content, and the reply is primed with 3 more.
 */
export const OPENAI_TOKENS_PER_MESSAGE = 3;
/** See {@link OPENAI_TOKENS_PER_MESSAGE}. */
export const OPENAI_REPLY_PRIMING_TOKENS = 3;
/**
 * Tokens per tool call replayed in an assistant message, on top of its name
 * and arguments (call id and wrapper).
 */
export const TOOL_CALL_OVERHEAD_TOKENS = 8;
/**
 * Flat cost of one image: the largest of OpenAI's high-detail tile cost for
 * images within 2048 px (85 + 8 × 170 = 1445), OpenAI's 1536-patch cap, and
 * Anthropic's ≈1600 tokens for an image at its 1.15-megapixel resize limit.
 */
export const IMAGE_TOKENS = 1600;
/**
 * Estimate mode: o200k tokens are multiplied by this ratio. Claude and
 * DeepSeek tokenizers produce more tokens than o200k for the same text
 * (Anthropic reports up to 1.35× between its own tokenizer generations), and
 * the fixture test checks the result against recorded provider usage.
 */
export const ESTIMATE_TEXT_RATIO = 1.35;
/** Estimate mode: framing per message (role markers, content-block wrappers). */
export const ESTIMATE_TOKENS_PER_MESSAGE = 8;
/**
 * Estimate mode: a flat allowance per request for text the provider adds
 * itself (extended-thinking instructions, reply priming). A recorded Claude
 * request with thinking enabled cost 46 tokens for a nine-word prompt.
 */
export const ESTIMATE_REQUEST_OVERHEAD_TOKENS = 64;
/**
 * Estimate mode: the hidden tool-use system prompt charged once when tools
 * are offered; 530 is the largest value Anthropic publishes (Claude 3 Opus,
 * `tool_choice: auto`); Claude 4 models charge 346.
 */
export const ESTIMATE_TOOLS_OVERHEAD_TOKENS = 530;
/** Estimate mode: framing per tool definition. */
export const ESTIMATE_TOKENS_PER_TOOL = 16;

/** The text, framing and images of one or more messages, before counting. */
export interface Tally {
  text: string[];
  framing: number;
  imageCount: number;
}

function isImage(attachment: unknown): boolean {
  return typeof attachment === "object" && attachment !== null &&
    (attachment as { type?: unknown }).type === "image";
}

/**
 * Adds one message to a tally: its texts, its framing (`perMessage`, plus
 * {@link TOOL_CALL_OVERHEAD_TOKENS} per tool call) and its images.
 */
export function tallyMessage(message: ProviderMessage, tally: Tally, perMessage: number): void {
  tally.framing += perMessage;
  tally.text.push(message.role);
  switch (message.role) {
    case "system":
      tally.text.push(message.text);
      return;
    case "user":
      tally.text.push(message.text);
      for (const attachment of message.attachments ?? []) {
        // Non-image attachments are unknown here; their JSON is a fair upper proxy.
        if (isImage(attachment)) tally.imageCount++;
        else tally.text.push(JSON.stringify(attachment) ?? "");
      }
      return;
    case "assistant":
      tally.text.push(message.text);
      // Reasoning is counted even where a provider drops it: over, never under.
      if (message.reasoning) tally.text.push(message.reasoning);
      for (const call of message.toolCalls ?? []) {
        tally.framing += TOOL_CALL_OVERHEAD_TOKENS;
        tally.text.push(call.name, call.arguments);
      }
      return;
    case "tool":
      tally.text.push(message.name, message.output);
      return;
    default: {
      const unknown: never = message;
      throw new TypeError(`Unknown message role: ${JSON.stringify(unknown)}`);
    }
  }
}

/** The tokens of every text, counted one by one. */
export function sumTokens(count: TokenCounter, texts: readonly string[]): number {
  let total = 0;
  for (const text of texts) total += count(text);
  return total;
}

/** Estimate mode: the tokens of a request's tool definitions, tool-use prompt included. */
export function estimateToolTokens(count: TokenCounter, tools: readonly ProviderTool[]): number {
  if (tools.length === 0) return 0;
  const definitions = tools.map((tool) =>
    JSON.stringify({ name: tool.name, description: tool.description, input: tool.inputSchema })
  );
  return ESTIMATE_TOOLS_OVERHEAD_TOKENS + tools.length * ESTIMATE_TOKENS_PER_TOOL +
    Math.ceil(sumTokens(count, definitions) * ESTIMATE_TEXT_RATIO);
}

/**
 * Counts the input tokens of a request for a model. OpenAI families are
 * counted exactly with their encoding (`o200k_base` or `cl100k_base`), chat
 * framing and the `namespace functions` rendering of tools included. Other
 * models get a conservative estimate: o200k tokens ×
 * {@link ESTIMATE_TEXT_RATIO}, plus per-message, per-tool, tool-use and
 * per-request allowances. Images cost {@link IMAGE_TOKENS} each.
 *
 * The encoding loads lazily on the first call for it, hence the promise.
 *
 * @param request the messages and tools of a provider request
 * @param model the model name, e.g. `gpt-4.1` or `claude-sonnet-4-5`
 * @returns the count, its breakdown and the tokenizer used
 * @example
 * ```ts
 * import { estimateTokens } from "@floret/engine/tokens";
 * const estimate = await estimateTokens(
 *   { messages: [{ role: "user", text: "List all U.S. states." }], tools: [] },
 *   "gpt-4o",
 * );
 * console.log(estimate.tokens, estimate.tokenizer); // 14 "o200k_base"
 * ```
 */
export async function estimateTokens(
  request: Pick<ProviderRequest, "messages" | "tools">,
  model: string,
): Promise<TokenEstimate> {
  const tokenizer = tokenizerForModel(model);
  const exact = tokenizer !== "estimate";
  const count = await loadTokenCounter(exact ? tokenizer : "o200k_base");
  const tally: Tally = { text: [], framing: 0, imageCount: 0 };
  const perMessage = exact ? OPENAI_TOKENS_PER_MESSAGE : ESTIMATE_TOKENS_PER_MESSAGE;
  for (const message of request.messages) tallyMessage(message, tally, perMessage);

  const textTokens = sumTokens(count, tally.text);
  let messageTokens: number;
  let toolTokens: number;
  if (exact) {
    messageTokens = textTokens + tally.framing + OPENAI_REPLY_PRIMING_TOKENS;
    toolTokens = count(openAIToolText(request.tools));
    // Tools live inside the system message, after a blank-line separator
    // (one token); without a system message, OpenAI adds one.
    const hasSystem = request.messages.some((message) => message.role === "system");
    if (toolTokens > 0) toolTokens += hasSystem ? 1 : OPENAI_TOKENS_PER_MESSAGE + 1;
  } else {
    messageTokens = Math.ceil(textTokens * ESTIMATE_TEXT_RATIO) + tally.framing +
      ESTIMATE_REQUEST_OVERHEAD_TOKENS;
    toolTokens = estimateToolTokens(count, request.tools);
  }
  const imageTokens = tally.imageCount * IMAGE_TOKENS;
  return {
    tokens: messageTokens + toolTokens + imageTokens,
    tokenizer,
    messageTokens,
    toolTokens,
    imageTokens,
    imageCount: tally.imageCount,
  };
}
