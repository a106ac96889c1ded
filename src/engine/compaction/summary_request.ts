/**
 * The summary request of a compaction: the compaction-writer instructions as
 * its own system message, the head rendered as text, no tools, and an output
 * ceiling. A head too large for one request goes in ordered batches, each
 * carrying the summary so far.
 *
 * @module
 */
import { MESSAGE_FRAMING_TOKENS } from "../../context/token_count.ts";
import type { TokenCounter } from "../../context/token_counter.ts";
import { canonicalJson } from "../../identity/canonical_json.ts";
import { sha256Hex } from "../../identity/fingerprint.ts";
import type { HistoryMessage } from "../../projection/history/history_message.ts";
import type { ProviderMessage, ProviderRequest } from "../../provider/gateway.ts";

/** Instructions of the summary request; never the agent's system prompt. */
export const COMPACTION_WRITER_PROMPT = [
  "You write compaction summaries for an AI agent whose conversation no longer fits its context window.",
  "Summarise the conversation excerpt you are given so that the agent can continue the work without it.",
  "Keep: the user's goals, decisions and constraints; facts, names, numbers, file paths and identifiers;",
  "what tools were called and what they returned, where it still matters; open questions and next steps.",
  "Drop pleasantries and repetition. Write plain text, no preamble. Stay within the stated length.",
].join("\n");

/** Renders one message of the head as plain text for the summary writer. */
export function renderMessage(message: ProviderMessage): string {
  switch (message.role) {
    case "system":
      return `[system]\n${message.text}`;
    case "user": {
      const images = message.attachments?.length
        ? ` (+${message.attachments.length} image(s))`
        : "";
      return `[user${images}]\n${message.text}`;
    }
    case "assistant": {
      let text = `[assistant]\n${message.text}`;
      for (const call of message.toolCalls ?? []) {
        text += `\n[tool call ${call.name}] ${call.arguments}`;
      }
      return text;
    }
    case "tool":
      return `[tool result ${message.name}${message.isError ? ", error" : ""}]\n${message.output}`;
    default: {
      const never: never = message;
      throw new Error(`Unknown message role ${(never as { role: string }).role}`);
    }
  }
}

/**
 * Splits the head into ordered batches whose rendered text fits `perBatch`
 * tokens by `counter` (a single message larger than that is a batch of its own, cut to fit).
 */
export function batchHead(
  head: readonly HistoryMessage[],
  perBatch: number,
  counter: TokenCounter,
): string[] {
  const batches: string[] = [];
  let current = "";
  let tokens = 0;
  for (const message of head) {
    let text = renderMessage(message.message);
    let cost = counter.text(text) + MESSAGE_FRAMING_TOKENS;
    if (cost > perBatch) {
      text = cutToTokens(text, perBatch - MESSAGE_FRAMING_TOKENS, counter);
      cost = perBatch;
    }
    if (tokens + cost > perBatch && current !== "") {
      batches.push(current);
      current = "";
      tokens = 0;
    }
    current += (current === "" ? "" : "\n\n") + text;
    tokens += cost;
  }
  if (current !== "") batches.push(current);
  return batches;
}

/** The longest prefix of `text` whose count by `counter` is within `tokens`. */
export function cutToTokens(text: string, tokens: number, counter: TokenCounter): string {
  if (counter.text(text) <= tokens) return text;
  let low = 0;
  let high = text.length;
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    if (counter.text(text.slice(0, mid)) <= tokens) low = mid;
    else high = mid - 1;
  }
  return text.slice(0, low);
}

/**
 * Builds one summary request.
 *
 * @param batch the rendered part of the head
 * @param previous the summary of the batches before, if any
 * @param maxOutputTokens the output budget, at most the summary ceiling
 */
export async function summaryRequest(
  batch: string,
  previous: string | undefined,
  maxOutputTokens: number,
): Promise<ProviderRequest> {
  let prompt = `Write a summary of at most about ${maxOutputTokens} tokens.\n\n`;
  if (previous !== undefined) {
    prompt += `<summary_so_far>\n${previous}\n</summary_so_far>\n\n` +
      "Extend the summary so far with the next part of the conversation below; " +
      "return one summary covering both.\n\n";
  }
  prompt += `<conversation>\n${batch}\n</conversation>`;
  const messages: ProviderMessage[] = [
    { role: "system", text: COMPACTION_WRITER_PROMPT },
    { role: "user", text: prompt },
  ];
  const body = { messages, tools: [], maxOutputTokens };
  return { ...body, fingerprint: await sha256Hex(canonicalJson(body)) };
}
