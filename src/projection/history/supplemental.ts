/**
 * Supplemental context as the model sees it: one ephemeral user message,
 * built from memory for one turn's requests and never stored.
 *
 * @module
 */
import type { SupplementalContext } from "../../journal/entries.ts";
import { type HistoryMessage, toHistory } from "./history_message.ts";

/**
 * Renders a turn's supplemental context as one user message (each part under
 * its title), or `undefined` when there is none.
 */
export function supplementalMessage(
  parts: readonly SupplementalContext[] | undefined,
): HistoryMessage | undefined {
  if (!parts?.length) return undefined;
  const text = parts.map((part) => `## ${part.title}\n\n${part.text}`).join("\n\n");
  return toHistory({ role: "user", text });
}
