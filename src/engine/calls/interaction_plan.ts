/**
 * Which calls of a batch wait for people, as journal entries: an `ask`
 * permission opens an approval, a valid `ask_user` call a question, and a
 * result with `inputRequired` a question after it. Each opens in the same
 * commit as the step or result that needs it.
 *
 * @module
 */
import type { InteractionOpenedEntry, NewEntry, StoredQuestion } from "../../journal/entries.ts";
import { ASK_USER_TOOL } from "../../tools/builtin_names.ts";
import type { PlannedCall } from "./tool_calls.ts";
import type { InputRequest } from "./tool_runner.ts";

/** The run that opens the interactions. */
export interface Opener {
  turnId: string;
  runId: string;
  newId(prefix: string): string;
}

/**
 * Marks the calls of a step that wait (their `interactionId` is set) and
 * returns the entries that open their interactions, in call order.
 */
export function openForCalls(planned: readonly PlannedCall[], opener: Opener): NewEntry[] {
  const opened: NewEntry[] = [];
  for (const call of planned) {
    const { record } = call;
    if (record.invalid || record.repeated) continue;
    const asks = record.decision === "ask";
    if (!asks && !(record.decision === "allow" && record.name === ASK_USER_TOOL)) continue;
    record.interactionId = opener.newId("interaction");
    const entry = base(opener, record.interactionId, asks ? "approval" : "input");
    entry.callId = record.callId;
    entry.toolName = record.name;
    if (!asks) entry.questions = (call.input as { questions: StoredQuestion[] }).questions;
    opened.push(entry);
  }
  return opened;
}

/** The entries that open a question for each result that asked for input. */
export function openForInputs(inputs: readonly InputRequest[], opener: Opener): NewEntry[] {
  return inputs.map((input) => {
    const entry = base(opener, opener.newId("interaction"), "input");
    entry.callId = input.callId;
    entry.toolName = input.name;
    entry.questions = input.questions;
    return entry;
  });
}

type OpenedEntry = Omit<InteractionOpenedEntry, "seq" | "at">;

function base(opener: Opener, interactionId: string, kind: "approval" | "input"): OpenedEntry {
  return {
    kind: "interaction_opened",
    turnId: opener.turnId,
    runId: opener.runId,
    interactionId,
    interaction: kind,
  };
}
