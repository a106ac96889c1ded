/**
 * Validating the model's tool calls before anything runs: JSON arguments, the
 * tool's zod schema, permissions and the repetition guard.
 *
 * @module
 */
import { z } from "zod";
import type { Agent } from "../../config/agent.ts";
import type { CallRecord } from "../../journal/entries.ts";
import {
  implementationOf,
  type PermissionContext,
  type ToolImplementation,
} from "../../tools/define_tool.ts";
import { argumentLimitProblem } from "./argument_limits.ts";
import { callHostCodeSync, describeThrown } from "../run/host_code.ts";
import { recordedButGone } from "../run/turn_surface.ts";

/** A call with its verdict and, when valid, its parsed input. */
export interface PlannedCall {
  record: CallRecord;
  tool?: ToolImplementation;
  input?: unknown;
  /**
   * Host code failed while the call was checked (a zod transform or
   * refinement, the permission function): the call does not run and its
   * result is this error, which the model sees.
   */
  failure?: string;
}

const PERMISSIONS: ReadonlySet<unknown> = new Set(["allow", "ask", "deny"]);

function describeValue(value: unknown): string {
  return typeof value === "string" ? JSON.stringify(value) : typeof value;
}

/** Consecutive identical calls; the third is refused, the fourth fails the turn. */
export class RepetitionGuard {
  #last = "";
  #count = 0;

  /**
   * Records a call; returns how many times in a row it has now been made.
   * Calls are compared by the raw argument text the model sent: two calls
   * that differ only in fields the schema strips are different calls.
   */
  observe(name: string, rawArguments: string): number {
    const signature = name + "\u0000" + rawArguments;
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
  where?: PermissionWhere,
): { planned: PlannedCall[]; repetitionExceeded: boolean } {
  const planning: Planning = { guard, repetitionExceeded: false, where };
  const planned: PlannedCall[] = new Array(calls.length);
  for (let i = 0; i < calls.length; i++) planned[i] = planCall(agent, calls[i], planning);
  return { planned, repetitionExceeded: planning.repetitionExceeded };
}

/** What the calls of one batch share while they are checked. */
interface Planning {
  readonly guard: RepetitionGuard;
  repetitionExceeded: boolean;
  /** The run's ids and labels, for permission functions. */
  readonly where: PermissionWhere | undefined;
}

/** What a permission function learns of the run (its call id is added per call). */
export type PermissionWhere = Omit<PermissionContext, "callId">;

/** The labels of a run without any. */
const NO_LABELS: Readonly<Record<string, string>> = Object.freeze({});

/**
 * A call to a tool the turn does not have: an ordinary error result listing
 * the tools it has, not an invalid-argument episode (the model named a tool,
 * it did not send bad arguments), so it never fails the turn by itself;
 * repeating it still counts toward the repetition limit.
 */
function unavailable(agent: Agent, record: CallRecord, planning: Planning): PlannedCall {
  const seen = planning.guard.observe(record.name, record.arguments);
  if (seen >= REPEAT_FAILS) planning.repetitionExceeded = true;
  if (seen >= REPEAT_REFUSED) {
    record.repeated = true;
    return { record };
  }
  record.decision = "allow";
  const failure = recordedButGone(agent, record.name)
    ? goneMessage(record.name, agent.tools.keys())
    : unavailableMessage(record.name, agent.tools.keys());
  return { record, failure };
}

/**
 * What the model reads when it calls a tool it does not have.
 *
 * @param name the tool the model called
 * @param available the names it may call
 * @returns the error result's text
 */
export function unavailableMessage(name: string, available: Iterable<string>): string {
  const names = [...available].join(", ") || "none";
  return `Unknown tool "${name}": tool not available. Available tools: ${names}.`;
}

/**
 * What the model reads when it calls a tool its turn was offered but the
 * host's agent no longer has (a turn resumed under its recorded surface).
 *
 * @param name the tool the model called
 * @param available the names it may call
 * @returns the error result's text
 */
export function goneMessage(name: string, available: Iterable<string>): string {
  const names = [...available].join(", ") || "none";
  return `The call to ${name} was not run: tool no longer available. Available tools: ${names}.`;
}

function planCall(
  agent: Agent,
  call: { callId: string; name: string; arguments: string },
  planning: Planning,
): PlannedCall {
  const record: CallRecord = { callId: call.callId, name: call.name, arguments: call.arguments };
  const definition = agent.tools.get(call.name);
  if (!definition) return unavailable(agent, record, planning);
  const tool = implementationOf(definition);
  const tooBig = argumentLimitProblem(call.arguments);
  if (tooBig) {
    record.invalid = `The arguments of ${call.name} were refused: ${tooBig}. ` +
      "Send a smaller, flatter JSON object that matches the tool's schema.";
    return { record, tool };
  }
  let raw: unknown;
  try {
    raw = call.arguments.trim() === "" ? {} : JSON.parse(call.arguments);
  } catch (error) {
    record.invalid = `The arguments of ${call.name} are not valid JSON (${
      (error as Error).message
    }). Send a JSON object that matches the tool's schema.`;
    return { record, tool };
  }
  // The schema is host code: its transforms and refinements may throw anything.
  let parsed: ReturnType<typeof tool.input.safeParse>;
  try {
    parsed = tool.input.safeParse(raw);
  } catch (error) {
    record.decision = "allow";
    return {
      record,
      tool,
      failure: `The input schema of ${call.name} failed: ${describeThrown(error)}`,
    };
  }
  if (!parsed.success) {
    const explained = callHostCodeSync(() => z.prettifyError(parsed.error));
    record.invalid = `The arguments of ${call.name} do not match its schema:\n${
      explained.ok ? explained.value : "(the schema's error could not be described)"
    }`;
    return { record, tool };
  }
  const seen = planning.guard.observe(call.name, call.arguments);
  if (seen >= REPEAT_FAILS) planning.repetitionExceeded = true;
  if (seen >= REPEAT_REFUSED) {
    record.repeated = true;
    return { record, tool, input: parsed.data };
  }
  let permission: unknown;
  let why: string | undefined;
  try {
    const where = planning.where;
    permission = tool.permissionFor(parsed.data, {
      threadId: where?.threadId ?? "",
      turnId: where?.turnId ?? "",
      runId: where?.runId ?? "",
      callId: call.callId,
      labels: where?.labels ?? NO_LABELS,
    });
    if (!PERMISSIONS.has(permission)) why = `it returned ${describeValue(permission)}`;
  } catch (error) {
    why = describeThrown(error);
  }
  if (why !== undefined) {
    // A broken permission function never lets a call run unchecked.
    record.decision = "allow";
    return {
      record,
      tool,
      input: parsed.data,
      failure: `The permission check of ${call.name} failed: ${why}`,
    };
  }
  // `ask` waits for an approval; the call never runs unapproved.
  record.decision = permission as CallRecord["decision"];
  return { record, tool, input: parsed.data };
}
