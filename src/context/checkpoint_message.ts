/**
 * The text of the checkpoint message that stands in for the summarised part
 * of a conversation: a short framing, the earlier user inputs kept verbatim,
 * and the summary itself, verbatim.
 *
 * @module
 */

/** Opens every checkpoint message; tells the model what follows. */
export const CHECKPOINT_INTRO = "Summary of the earlier conversation (historical context):";

/**
 * Renders a checkpoint message.
 *
 * @param summary the summary text, included unchanged
 * @param keptInputs earlier user inputs kept verbatim, oldest first
 * @returns the message text
 */
export function checkpointText(summary: string, keptInputs: readonly string[]): string {
  let text = CHECKPOINT_INTRO + "\n";
  if (keptInputs.length > 0) {
    text += "<earlier_user_inputs>" + JSON.stringify(keptInputs) + "</earlier_user_inputs>\n";
  }
  return text + "<summary>\n" + summary + "\n</summary>";
}
