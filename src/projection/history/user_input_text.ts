/**
 * The text the model reads for a user's message: its own text, then each
 * context item as a labelled block, then each reference as a one-line note
 * (DESIGN §11). The rendering is fixed, so the same message renders the same
 * bytes in every later request (and a request's fingerprint stays stable);
 * a message with neither context nor references renders its text unchanged.
 *
 * @module
 */
import type { AdmittedInput, InputReference } from "../../journal/entries.ts";

/**
 * The model-facing text of an admitted input.
 *
 * ```text
 * <the message's text>
 *
 * [Context: <label>]
 * <the item's text>
 *
 * [Reference: thread <threadId>, item <itemId>]
 * ```
 *
 * @param input the input as admitted
 * @returns the text of its user message in every request
 */
export function userMessageText(input: AdmittedInput): string {
  const context = input.context;
  const references = input.references;
  if (!context?.length && !references?.length) return input.text;
  const parts: string[] = input.text.trim() === "" ? [] : [input.text];
  for (const item of context ?? []) parts.push(`[Context: ${oneLine(item.label)}]\n${item.text}`);
  if (references?.length) parts.push(references.map(referenceNote).join("\n"));
  return parts.join("\n\n");
}

/** One reference as a note naming its thread (and item). */
function referenceNote(reference: InputReference): string {
  const item = reference.itemId === undefined ? "" : `, item ${oneLine(reference.itemId)}`;
  return `[Reference: thread ${oneLine(reference.threadId)}${item}]`;
}

/** A label or id on one line: a line break inside would forge the block's framing. */
function oneLine(text: string): string {
  return text.replace(/[\r\n\u2028\u2029]+/g, " ");
}
