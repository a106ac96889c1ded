/**
 * Supplemental context (`send({ supplementalContext })`) lives in memory
 * for one turn and is never stored. A step made with it keeps nothing that
 * depends on it: no provider continuation state (encrypted reasoning,
 * signatures over a prompt the journal does not have), and its usage is
 * recorded for accounting but never counts as the provider's confirmed
 * measure of the stored history (it measured a longer request).
 *
 * @module
 */
import type { StepEntry } from "../../journal/entries.ts";

/**
 * Drops what a step made with supplemental context must not leave behind.
 *
 * @param entry the step about to be committed, changed in place
 */
export function withoutSupplementalTrace(entry: Omit<StepEntry, "seq" | "at">): void {
  delete entry.state;
  if (entry.usage) entry.unconfirmed = true;
}
