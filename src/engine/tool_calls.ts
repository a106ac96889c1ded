/**
 * Validating the model's tool calls before anything runs: JSON arguments, the
 * tool's zod schema, permissions and the repetition guard.
 *
 * @module
 */
import { z } from "zod";
import type { Agent } from "../config/agent.ts";
import { canonicalJson } from "../identity/canonical_json.ts";
import type { CallRecord } from "../journal/entries.ts";
import { implementationOf, type ToolImplementation } from "../tools/define_tool.ts";

/** A call with its verdict and, when valid, its parsed input. */
export interface PlannedCall {
  record: CallRecord;
  tool?: ToolImplementation;
  input?: unknown;
}

/** Consecutive identical calls; the third is refused, the fourth fails the turn. */
export class RepetitionGuard {
  #last = "";
  #count = 0;

  /** Records a valid call; returns how many times in a row it has now been made. */
  observe(name: string, input: unknown): number {
    const signature = name + "\u0000" + canonicalJson(input);
    this.#count = signature === this.#last ? this.#count + 1 : 1;
    this.#last = signature;
    return this.#count;
  }
}

/** The repetition count at which a call is refused, and the one that fails the turn. */
export const REPEAT_REFUSED = 3;
export const REPEAT_FAILS = 4;

/**
 * Checks each call of a batch.
 *
 * @returns the planned calls in order, and whether the repetition limit was passed
 */
export function planCalls(
  agent: Agent,
  calls: readonly { callId: string; name: string; arguments: string }[],
  guard: RepetitionGuard,
): { planned: PlannedCall[]; repetitionExceeded: boolean } {
  let repetitionExceeded = false;
  const planned = calls.map((call): PlannedCall => {
    const record: CallRecord = { callId: call.callId, name: call.name, arguments: call.arguments };
    const definition = agent.tools.get(call.name);
    if (!definition) {
      record.invalid = `Unknown tool "${call.name}". Available tools: ${
        [...agent.tools.keys()].join(", ") || "none"
      }.`;
      return { record };
    }
    const tool = implementationOf(definition);
    let raw: unknown;
    try {
      raw = call.arguments.trim() === "" ? {} : JSON.parse(call.arguments);
    } catch (error) {
      record.invalid = `The arguments of ${call.name} are not valid JSON (${
        (error as Error).message
      }). Send a JSON object that matches the tool's schema.`;
      return { record, tool };
    }
    const parsed = tool.input.safeParse(raw);
    if (!parsed.success) {
      record.invalid = `The arguments of ${call.name} do not match its schema:\n${
        z.prettifyError(parsed.error)
      }`;
      return { record, tool };
    }
    const seen = guard.observe(call.name, parsed.data);
    if (seen >= REPEAT_FAILS) repetitionExceeded = true;
    if (seen >= REPEAT_REFUSED) {
      record.repeated = true;
      return { record, tool, input: parsed.data };
    }
    let permission: unknown;
    try {
      permission = tool.permissionFor(parsed.data);
    } catch {
      permission = "deny"; // a permission function that throws never lets a call run
    }
    // Anything but a clear allow or ask is a refusal: a call never runs unapproved.
    record.decision = permission === "allow" || permission === "ask" ? permission : "deny";
    return { record, tool, input: parsed.data };
  });
  return { planned, repetitionExceeded };
}
