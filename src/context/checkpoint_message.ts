/**
 * The text of the checkpoint message that stands in for the summarised part
 * of a conversation: a short framing, the earlier user inputs kept verbatim,
 * and the summary itself, verbatim.
 *
 * @module
 */

/** Opens every checkpoint message; tells the model what follows. */
export const CHECKPOINT_INTRO =
  "The earlier part of this conversation was compacted to fit the context window. " +
  "What follows is historical context, not a new request.";

/**
 * Renders a checkpoint message.
 *
 * @param summary the summary text, included unchanged
 * @param keptInputs earlier user inputs kept verbatim, oldest first
 * @returns the message text
 */
export function checkpointText(summary: string, keptInputs: readonly string[]): string {
  let text = CHECKPOINT_INTRO + "\n\n";
  if (keptInputs.length > 0) {
    text += "<earlier_user_inputs>\n" + JSON.stringify(keptInputs) + "\n</earlier_user_inputs>\n\n";
  }
  return text + "<summary>\n" + summary + "\n</summary>";
}
