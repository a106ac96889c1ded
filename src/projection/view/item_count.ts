/**
 * How many view items entries add, from the entries alone: the rules of
 * {@link ViewModel} for which entries make items, without a view. A turn's
 * admission can share its commit with the end of the turn before (a queued
 * input handed over), so the new turn's first ordinal must count items of
 * entries the view has not seen yet.
 *
 * @module
 */
import type { CallRecord, Entry, NewEntry } from "../../journal/entries.ts";
import { ASK_USER_TOOL } from "../../tools/builtin_names.ts";

/**
 * Whether a call of a step gets a tool item: rejected calls do not (their
 * feedback is in the journal), and an `ask_user` call is shown by its
 * interaction item alone unless it waits for an approval first.
 */
export function showsToolItem(call: CallRecord): boolean {
  if (call.invalid) return false;
  return !(call.name === ASK_USER_TOOL && call.interactionId && call.decision !== "ask");
}

/**
 * The settled items `entries` add to a view, in any order of kinds.
 *
 * @param entries entries about to be committed (or committed)
 * @returns how many items they add
 */
export function itemsMadeBy(entries: readonly (Entry | NewEntry)[]): number {
  let count = 0;
  for (const entry of entries) {
    switch (entry.kind) {
      case "turn_started":
        if (entry.input) count++;
        break;
      case "steer":
        count++;
        break;
      case "step":
        if (entry.reasoning) count++;
        if (entry.text) count++;
        for (const call of entry.calls) if (showsToolItem(call)) count++;
        count += entry.hosted?.length ?? 0;
        break;
      case "interaction_opened":
        // An approval of a call is shown on that call's tool item.
        if (!(entry.interaction === "approval" && entry.callId !== undefined)) count++;
        break;
    }
  }
  return count;
}
