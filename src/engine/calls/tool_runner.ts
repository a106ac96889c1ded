/**
 * Running a batch of validated calls: concurrently, results in call order,
 * outputs bounded for the model with the full text kept as an artifact.
 *
 * @module
 */
import type { StoredQuestion, ToolOutcome } from "../../journal/entries.ts";
import type { Artifact } from "../../projection/view/view_types.ts";
import { askUserInput } from "../../tools/builtin_tools.ts";
import type { ToolContext } from "../../tools/define_tool.ts";
import { callHostCodeSync, describeThrown } from "../run/host_code.ts";
import { normaliseActivity } from "../../tools/tool_activity.ts";
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

/** What every call of a batch learns besides its call id; `signal` may be a getter. */
export type BatchContext = Omit<ToolContext, "callId" | "labels"> & {
  /** The turn's run labels (frozen); `{}` when absent. */
  labels?: Readonly<Record<string, string>> | undefined;
  /** Aborted by a steer: `read`/`none` calls still running settle `cancelled` (steered). */
  steerSignal?: AbortSignal;
};

/**
 * One call's context: the batch's ids, its signal and the call id, in that
 * order. The signal is a getter that reads the batch's on first use, so a run
 * whose handlers never look at it never makes its `AbortSignal` (several
 * microseconds each). A literal's getter, not `Object.defineProperty` calls:
 * one closure per call costs less than two descriptors interpreted per call.
 */
function callContext(batch: BatchContext, callId: string): ToolContext {
  return {
    threadId: batch.threadId,
    turnId: batch.turnId,
    runId: batch.runId,
    get signal(): AbortSignal {
      return batch.signal;
    },
    callId,
    labels: batch.labels ?? NO_LABELS,
  };
}

/**
 * Settles every call of a batch in call order; allowed calls run concurrently.
 * Every handler starts before this returns, in call order; a handler that
 * answers synchronously is read at once, without a promise of its own, and a
 * batch whose handlers all did is settled when this returns (no promise: there
 * is nothing in flight to wait for or to abort).
 *
 * @param planned the batch
 * @param context what each handler learns (its `callId` is filled per call)
 * @param newArtifactId allocates artifact ids
 * @returns the settled batch, or a promise of it while a handler is still running
 */
export function runBatch(
  planned: readonly PlannedCall[],
  context: BatchContext,
  newArtifactId: () => string,
): BatchResult | Promise<BatchResult> {
  const batch = new BatchRun(context, newArtifactId);
  const settling: (ToolOutcome | Promise<ToolOutcome>)[] = new Array(planned.length);
  let waits = false;
  for (let i = 0; i < planned.length; i++) {
    const outcome = refusal(planned[i]) ?? batch.run(planned[i]);
    if (outcome instanceof Promise) waits = true;
    settling[i] = outcome;
  }
  if (!waits) return batch.result(planned, settling as ToolOutcome[]);
  return Promise.all(settling).then((outcomes) => batch.result(planned, outcomes));
}

/** The outcome of a call that does not run (invalid, failed checks, repeated, denied). */
function refusal(call: PlannedCall): ToolOutcome | undefined {
  const { record } = call;
  if (record.invalid) return outcomeOf(record, "error", record.invalid);
  if (call.failure !== undefined) return outcomeOf(record, "error", call.failure);
  if (record.repeated) {
    return outcomeOf(
      record,
      "error",
      `Not executed: this exact ${record.name} call was already made twice in a row. ` +
        "Use the earlier result or try something different.",
    );
  }
  if (record.decision === "deny") {
    return outcomeOf(
      record,
      "denied",
      `The call to ${record.name} was not run: it was denied by policy.`,
    );
  }
  return undefined;
}

function outcomeOf(
  record: { callId: string; name: string },
  status: ToolOutcome["status"],
  output: string,
): ToolOutcome {
  return { callId: record.callId, name: record.name, status, output };
}

/** What one batch collects besides its outcomes. */
class BatchRun {
  readonly artifacts: Artifact[] = [];
  readonly rejectedActivity: BatchResult["rejectedActivity"] = [];
  readonly #inputs = new Map<string, InputRequest>();
  readonly #context: BatchContext;
  readonly #newArtifactId: () => string;

  constructor(context: BatchContext, newArtifactId: () => string) {
    this.#context = context;
    this.#newArtifactId = newArtifactId;
  }

  /** Runs an allowed call: its outcome now when the handler answered synchronously. */
  run(call: PlannedCall): ToolOutcome | Promise<ToolOutcome> {
    const record = call.record;
    let ran: unknown;
    try {
      const steer = this.#context.steerSignal;
      const steerable = steer !== undefined && !steer.aborted && isSafeEffect(call);
      const context = steerable
        ? steeredContext(this.#context, record.callId, steer)
        : callContext(this.#context, record.callId);
      ran = call.tool!.execute(call.input, context);
      // Reading `then` is host code too (a getter, a Proxy): inside the guard.
      if (isThenable(ran)) {
        return steerable
          ? untilSteered(this.#ranLater(call, ran), call, steer)
          : this.#ranLater(call, ran);
      }
    } catch (error) {
      return outcomeOf(record, "error", describeThrown(error));
    }
    return this.#bounded(call, this.#read(call, ran));
  }

  async #ranLater(call: PlannedCall, ran: PromiseLike<unknown>): Promise<ToolOutcome> {
    let value: unknown;
    try {
      value = await ran;
    } catch (error) {
      return outcomeOf(call.record, "error", describeThrown(error));
    }
    return this.#bounded(call, this.#read(call, value));
  }

  /** The settled batch: its outcomes, and the results that asked for input in call order. */
  result(planned: readonly PlannedCall[], outcomes: ToolOutcome[]): BatchResult {
    const inputs: InputRequest[] = [];
    if (this.#inputs.size > 0) {
      for (const call of planned) {
        const input = this.#inputs.get(call.record.callId);
        if (input !== undefined) inputs.push(input);
      }
    }
    return {
      outcomes,
      artifacts: this.artifacts,
      inputs,
      rejectedActivity: this.rejectedActivity,
    };
  }

  /** The outcome with an output too long for the model kept as an artifact. */
  #bounded(call: PlannedCall, outcome: ToolOutcome): ToolOutcome {
    if (
      outcome.output.length <= MAX_MODEL_OUTPUT_BYTES / 4 ||
      byteLength(outcome.output) <= MAX_MODEL_OUTPUT_BYTES
    ) return outcome;
    const context = this.#context;
    const artifact: Artifact = {
      id: this.#newArtifactId(),
      turnId: context.turnId,
      runId: context.runId,
      callId: call.record.callId,
      text: outcome.output,
    };
    this.artifacts.push(artifact);
    return { ...outcome, output: bound(outcome.output, artifact.id), artifactId: artifact.id };
  }

  /** Reads a handler's value; reading is host code too (its fields may be getters or a Proxy). */
  #read(call: PlannedCall, value: unknown): ToolOutcome {
    const record = call.record;
    try {
      return this.#outcome(record, value);
    } catch (error) {
      return outcomeOf(
        record,
        "error",
        `The tool's result could not be read: ${describeThrown(error)}`,
      );
    }
  }

  #outcome(record: PlannedCall["record"], value: unknown): ToolOutcome {
    if (!isToolResult(value)) return outcomeOf(record, "completed", stringify(value));
    if (value.inputRequired !== undefined) {
      const parsed = askUserInput.safeParse(value.inputRequired);
      if (!parsed.success) {
        return outcomeOf(
          record,
          "error",
          "The tool asked for input with invalid questions: " + parsed.error.message,
        );
      }
      this.#inputs.set(record.callId, {
        callId: record.callId,
        name: record.name,
        questions: parsed.data.questions,
      });
    }
    const outcome = outcomeOf(
      record,
      // Uncertain even without isError: an effect the tool doubts is never told as done.
      value.effectOutcome === "uncertain" ? "uncertain" : value.isError ? "error" : "completed",
      value.output,
    );
    if (value.structured !== undefined) {
      const stored = storableStructured(value.structured);
      if (!stored.ok) {
        // The model is told; an effect the handler reported stays as reported.
        return {
          ...outcome,
          status: outcome.status === "uncertain" ? "uncertain" : "error",
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
      else this.rejectedActivity.push({ callId: record.callId, problem: checked.problem });
    }
    return outcome;
  }
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (typeof value === "object" || typeof value === "function") && value !== null &&
    typeof (value as { then?: unknown }).then === "function";
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
  // Guarded in place (no closure per result): a value's toJSON or getters are host code.
  let json: string | undefined;
  try {
    json = JSON.stringify(value);
  } catch {
    json = undefined;
  }
  if (typeof json === "string") return json;
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

/** Calls a steer may end: they changed nothing outside, so running them again is safe. */
function isSafeEffect(call: PlannedCall): boolean {
  const effect = call.tool?.effect;
  return effect === "read" || effect === "none";
}

/** A call's context whose signal also aborts on a steer. */
function steeredContext(batch: BatchContext, callId: string, steer: AbortSignal): ToolContext {
  let signal: AbortSignal | undefined;
  return {
    threadId: batch.threadId,
    turnId: batch.turnId,
    runId: batch.runId,
    get signal(): AbortSignal {
      return (signal ??= AbortSignal.any([batch.signal, steer]));
    },
    callId,
    labels: batch.labels ?? NO_LABELS,
  };
}

/** The call's outcome, or `cancelled` (steered) when a steer comes first. */
function untilSteered(
  outcome: Promise<ToolOutcome>,
  call: PlannedCall,
  steer: AbortSignal,
): Promise<ToolOutcome> {
  return new Promise((resolve) => {
    const steered = () =>
      resolve(outcomeOf(
        call.record,
        "cancelled",
        `Cancelled (reason: steered): the user steered the turn while ${call.record.name} ran; ` +
          "read their new instruction.",
      ));
    steer.addEventListener("abort", steered, { once: true });
    outcome.then((settled) => {
      steer.removeEventListener("abort", steered);
      resolve(settled);
    });
  });
}

/** The labels of a run without any (frozen, so one object serves every call). */
const NO_LABELS: Readonly<Record<string, string>> = Object.freeze({});
