/**
 * Running a batch of validated calls: concurrently, results in call order,
 * outputs bounded for the model with the full text kept as an artifact.
 *
 * @module
 */
import type { StoredQuestion, ToolOutcome } from "../journal/entries.ts";
import type { Artifact } from "../projection/view_types.ts";
import { askUserInput } from "../tools/builtin_tools.ts";
import type { ToolContext } from "../tools/define_tool.ts";
import { callHostCode, callHostCodeSync } from "./host_code.ts";
import { normaliseActivity } from "../tools/tool_activity.ts";
import type { PlannedCall } from "./tool_calls.ts";
import { storableStructured } from "./structured_value.ts";

/** Outputs longer than this reach the model as head + tail. */
export const MAX_MODEL_OUTPUT_BYTES = 64 * 1024;

/** A result that asked the user for input (`ToolResult.inputRequired`). */
export interface InputRequest {
  callId: string;
  name: string;
  questions: StoredQuestion[];
}

/** The settled batch. */
export interface BatchResult {
  outcomes: ToolOutcome[];
  artifacts: Artifact[];
  /** Results that asked the user for input, in call order. */
  inputs: InputRequest[];
  /** Activities that were dropped for their shape, by call. */
  rejectedActivity: { callId: string; problem: string }[];
}

/**
 * Settles every call of a batch in call order; allowed calls run concurrently.
 *
 * @param planned the batch
 * @param context what each handler learns (its `callId` is filled per call)
 * @param newArtifactId allocates artifact ids
 */
export async function runBatch(
  planned: readonly PlannedCall[],
  context: Omit<ToolContext, "callId">,
  newArtifactId: () => string,
): Promise<BatchResult> {
  const artifacts: Artifact[] = [];
  const inputs = new Map<string, InputRequest>();
  const rejectedActivity: BatchResult["rejectedActivity"] = [];
  const outcomes = await Promise.all(planned.map(async (call): Promise<ToolOutcome> => {
    const { record } = call;
    const base = { callId: record.callId, name: record.name };
    if (record.invalid) return { ...base, status: "error", output: record.invalid };
    if (call.failure !== undefined) return { ...base, status: "error", output: call.failure };
    if (record.repeated) {
      return {
        ...base,
        status: "error",
        output: `Not executed: this exact ${record.name} call was already made twice in a row. ` +
          "Use the earlier result or try something different.",
      };
    }
    if (record.decision === "deny") {
      return {
        ...base,
        status: "denied",
        output: `The call to ${record.name} was not run: it was denied by policy.`,
      };
    }
    const outcome = await execute(
      call,
      { ...context, callId: record.callId },
      (questions) => inputs.set(record.callId, { ...base, questions }),
      rejectedActivity,
    );
    if (
      outcome.output.length > MAX_MODEL_OUTPUT_BYTES / 4 &&
      byteLength(outcome.output) > MAX_MODEL_OUTPUT_BYTES
    ) {
      const artifact: Artifact = {
        id: newArtifactId(),
        turnId: context.turnId,
        runId: context.runId,
        callId: record.callId,
        text: outcome.output,
      };
      artifacts.push(artifact);
      return { ...outcome, output: bound(outcome.output, artifact.id), artifactId: artifact.id };
    }
    return outcome;
  }));
  const ordered = planned.map((call) => inputs.get(call.record.callId)).filter((input) =>
    input !== undefined
  );
  return { outcomes, artifacts, inputs: ordered, rejectedActivity };
}

async function execute(
  call: PlannedCall,
  context: ToolContext,
  askInput: (questions: StoredQuestion[]) => void,
  rejectedActivity: BatchResult["rejectedActivity"],
): Promise<ToolOutcome> {
  const base = { callId: call.record.callId, name: call.record.name };
  const ran = await callHostCode(() => call.tool!.execute(call.input, context));
  if (!ran.ok) return { ...base, status: "error", output: ran.message };
  // Reading the result is host code too: its fields may be getters or a Proxy.
  const read = callHostCodeSync((): ToolOutcome => {
    const value = ran.value;
    if (!isToolResult(value)) return { ...base, status: "completed", output: stringify(value) };
    if (value.inputRequired !== undefined) {
      const parsed = askUserInput.safeParse(value.inputRequired);
      if (!parsed.success) {
        return {
          ...base,
          status: "error",
          output: "The tool asked for input with invalid questions: " + parsed.error.message,
        };
      }
      askInput(parsed.data.questions);
    }
    const outcome: ToolOutcome = {
      ...base,
      status: value.effectOutcome === "uncertain"
        ? "unknown"
        : value.isError
        ? "error"
        : "completed",
      output: value.output,
    };
    if (value.structured !== undefined) {
      const stored = storableStructured(value.structured);
      if (!stored.ok) {
        // The model is told; an effect the handler reported stays as reported.
        return {
          ...outcome,
          status: outcome.status === "unknown" ? "unknown" : "error",
          output: `The tool's structured result cannot be stored (${stored.message}). ` +
            `Its output was:\n${value.output}`,
        };
      }
      outcome.structured = stored.value.json;
      if (stored.value.types) outcome.structuredTypes = stored.value.types;
    }
    if (value.activity !== undefined) {
      const checked = normaliseActivity(value.activity);
      if ("activity" in checked) outcome.activity = checked.activity;
      else rejectedActivity.push({ callId: base.callId, problem: checked.problem });
    }
    return outcome;
  });
  if (!read.ok) {
    return {
      ...base,
      status: "error",
      output: `The tool's result could not be read: ${read.message}`,
    };
  }
  return read.value;
}

function isToolResult(value: unknown): value is {
  output: string;
  isError?: boolean;
  structured?: unknown;
  effectOutcome?: string;
  inputRequired?: unknown;
  activity?: unknown;
} {
  return typeof value === "object" && value !== null &&
    typeof (value as { output?: unknown }).output === "string";
}

function stringify(value: unknown): string {
  if (typeof value === "string") return value;
  if (value === undefined) return "";
  const json = callHostCodeSync(() => JSON.stringify(value));
  if (json.ok && typeof json.value === "string") return json.value;
  const text = callHostCodeSync(() => String(value));
  return text.ok ? text.value : Object.prototype.toString.call(value);
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

function byteLength(text: string): number {
  return encoder.encode(text).length;
}

/** Keeps a head and a tail of about 16 KiB each, cut on character boundaries. */
function bound(text: string, artifactId: string): string {
  const bytes = encoder.encode(text);
  const keep = 16 * 1024;
  const head = decoder.decode(bytes.subarray(0, keep)).replace(/\uFFFD$/, "");
  const tail = decoder.decode(bytes.subarray(bytes.length - keep)).replace(/^\uFFFD/, "");
  const omitted = bytes.length - 2 * keep;
  return `${head}\n\n[… ${omitted} bytes omitted; full output kept as artifact ${artifactId} …]\n\n${tail}`;
}
