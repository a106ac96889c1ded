/**
 * Running a batch of validated calls: concurrently, results in call order,
 * outputs bounded for the model with the full text kept as an artifact.
 *
 * @module
 */
import type { ToolOutcome } from "../journal/entries.ts";
import type { Artifact } from "../projection/view_types.ts";
import type { ToolContext } from "../tools/define_tool.ts";
import { normaliseActivity } from "../tools/tool_activity.ts";
import type { PlannedCall } from "./tool_calls.ts";

/** Outputs longer than this reach the model as head + tail. */
export const MAX_MODEL_OUTPUT_BYTES = 64 * 1024;

/** The settled batch. */
export interface BatchResult {
  outcomes: ToolOutcome[];
  artifacts: Artifact[];
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
  const rejectedActivity: BatchResult["rejectedActivity"] = [];
  const outcomes = await Promise.all(planned.map(async (call): Promise<ToolOutcome> => {
    const { record } = call;
    const base = { callId: record.callId, name: record.name };
    if (record.invalid) return { ...base, status: "error", output: record.invalid };
    if (record.repeated) {
      return {
        ...base,
        status: "error",
        output: `Not executed: this exact ${record.name} call was already made twice in a row. ` +
          "Use the earlier result or try something different.",
      };
    }
    if (record.decision === "deny") {
      const why = record.needsApproval
        ? "it needs the user's approval, which this host cannot ask for yet"
        : "it was denied by policy";
      return {
        ...base,
        status: "denied",
        output: `The call to ${record.name} was not run: ${why}.`,
      };
    }
    const outcome = await execute(call, { ...context, callId: record.callId }, rejectedActivity);
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
  return { outcomes, artifacts, rejectedActivity };
}

async function execute(
  call: PlannedCall,
  context: ToolContext,
  rejectedActivity: BatchResult["rejectedActivity"],
): Promise<ToolOutcome> {
  const base = { callId: call.record.callId, name: call.record.name };
  try {
    const value = await call.tool!.execute(call.input, context);
    if (isToolResult(value)) {
      const outcome: ToolOutcome = {
        ...base,
        status: value.effectOutcome === "uncertain"
          ? "unknown"
          : value.isError
          ? "error"
          : "completed",
        output: value.output,
      };
      if (value.structured !== undefined) outcome.structured = value.structured;
      if (value.activity !== undefined) {
        const checked = normaliseActivity(value.activity);
        if ("activity" in checked) outcome.activity = checked.activity;
        else rejectedActivity.push({ callId: base.callId, problem: checked.problem });
      }
      return outcome;
    }
    return { ...base, status: "completed", output: stringify(value) };
  } catch (error) {
    const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    return { ...base, status: "error", output: message };
  }
}

function isToolResult(value: unknown): value is {
  output: string;
  isError?: boolean;
  structured?: unknown;
  effectOutcome?: string;
  activity?: unknown;
} {
  return typeof value === "object" && value !== null &&
    typeof (value as { output?: unknown }).output === "string";
}

function stringify(value: unknown): string {
  if (typeof value === "string") return value;
  if (value === undefined) return "";
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
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
