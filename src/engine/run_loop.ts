/**
 * The model loop of one run: request, stream, commit the step, validate and
 * run tools, commit their results, and go again until the model stops or a
 * limit ends the turn.
 *
 * @module
 */
import type { Agent } from "../config/agent.ts";
import type { StepEntry, ToolResultsEntry, TurnFailure, TurnOutcome } from "../journal/entries.ts";
import type { HistoryReader } from "../projection/history_model.ts";
import { ProviderError } from "../provider/provider_error.ts";
import { needsDispatchMarker } from "../tools/define_tool.ts";
import { callProvider, type StepOutput } from "./provider_call.ts";
import { buildRequest } from "./request_builder.ts";
import { planCalls, RepetitionGuard } from "./tool_calls.ts";
import type { Artifact } from "../projection/view_types.ts";
import { runBatch } from "./tool_runner.ts";

/** A step entry before the journal numbers it. */
export type NewStep = Omit<StepEntry, "seq" | "at">;
/** A results entry before the journal numbers it. */
export type NewResults = Omit<ToolResultsEntry, "seq" | "at">;

/**
 * What the loop needs from the thread that runs it. Every commit returns
 * `false` when this run no longer owns the thread (cancelled, deleted, taken
 * over); the loop then stops without writing anything else.
 */
export interface RunHost {
  readonly history: HistoryReader;
  /** Aborts the provider request. */
  readonly signal: AbortSignal;
  /** Aborts tool handlers. */
  readonly toolSignal: AbortSignal;
  stopRequested(): boolean;
  progress(phase: "model" | "tools" | "retry_wait", step: number, attempt?: number): void;
  liveDelta(step: number, kind: "thinking" | "assistant", delta: string): void;
  dropLive(step: number): void;
  commitStep(step: NewStep, end?: { outcome: TurnOutcome }): Promise<boolean>;
  commitResults(results: NewResults, artifacts: Artifact[]): Promise<boolean>;
  endTurn(outcome: TurnOutcome, failure?: TurnFailure): Promise<boolean>;
  batchStarted(batch: Promise<unknown>): void;
  /** Whether anyone listens; events (and their details) are built only then. */
  readonly observing: boolean;
  observe(type: string, detail: Record<string, unknown>): void;
  newId(prefix: string): string;
}

/** Regenerations allowed per correction episode before the turn fails. */
export const MAX_CORRECTIONS = 2;
/** `length` finishes continued per turn. */
export const MAX_LENGTH_CONTINUATIONS = 2;

/**
 * Runs one turn until it ends or the run loses the thread.
 *
 * @param agent the turn's agent
 * @param host the thread's side of the loop
 * @param ids the run's identity
 */
export async function runTurn(
  agent: Agent,
  host: RunHost,
  ids: { threadId: string; turnId: string; runId: string },
): Promise<void> {
  const guard = new RepetitionGuard();
  let step = 0;
  let corrections = 0;
  let lengthContinuations = 0;
  let emptyRetried = false;
  for (;;) {
    if (host.stopRequested() || host.signal.aborted) return;
    if (step >= agent.maxSteps) {
      await host.endTurn("failed", {
        code: "max_steps",
        message: `The turn reached its limit of ${agent.maxSteps} model requests`,
      });
      return;
    }
    const stepNo = step++;
    const request = await buildRequest(agent, host.history, ids.turnId, ids.threadId);
    host.progress("model", stepNo, 1);
    let output: StepOutput;
    try {
      output = await callProvider(agent.gateway, request, agent.retry, host.signal, {
        onDelta: (kind, delta) => host.liveDelta(stepNo, kind, delta),
        onAttempt: (attempt) => {
          if (attempt > 1) host.progress("model", stepNo, attempt);
          if (host.observing) {
            host.observe("provider.attempt", {
              step: stepNo,
              attempt,
              fingerprint: request.fingerprint,
            });
          }
        },
        onRetry: (attempt, delayMs, error) => {
          host.dropLive(stepNo);
          host.progress("retry_wait", stepNo, attempt);
          host.observe("provider.retry", {
            step: stepNo,
            attempt,
            delayMs,
            ...describeProviderError(error),
          });
        },
      });
    } catch (error) {
      if (host.signal.aborted) return;
      host.dropLive(stepNo);
      await host.endTurn("failed", providerFailure(error));
      return;
    }
    if (output.usage && host.observing) {
      host.observe("usage", { step: stepNo, usage: output.usage });
    }

    const entry: NewStep = {
      kind: "step",
      turnId: ids.turnId,
      runId: ids.runId,
      step: stepNo,
      text: output.text,
      calls: [],
      finish: output.finish,
      stateKey: agent.gateway.info.stateKey,
    };
    if (output.reasoning) entry.reasoning = output.reasoning;
    if (output.usage) entry.usage = output.usage;
    if (output.state !== undefined) entry.state = output.state;

    if (output.calls.length === 0) {
      if (output.text === "" && output.finish === "stop" && !emptyRetried) {
        emptyRetried = true; // an empty answer is asked for again, once
        host.dropLive(stepNo);
        continue;
      }
      if (output.finish === "length" && lengthContinuations < MAX_LENGTH_CONTINUATIONS) {
        lengthContinuations++;
        if (!await host.commitStep(entry)) return;
        continue;
      }
      await host.commitStep(entry, { outcome: "completed" });
      return;
    }

    const { planned, repetitionExceeded } = planCalls(agent, output.calls, guard);
    entry.calls = planned.map((call) => call.record);
    const runnable = planned.filter((call) =>
      !call.record.invalid && !call.record.repeated && call.record.decision === "allow"
    );
    const dispatched = runnable.filter((call) => needsDispatchMarker(call.tool!.effect)).map((
      call,
    ) => call.record.callId);
    if (dispatched.length > 0) entry.dispatched = dispatched;
    if (!await host.commitStep(entry)) return;

    host.progress("tools", stepNo);
    for (const call of host.observing ? runnable : []) {
      host.observe("tool.dispatched", {
        callId: call.record.callId,
        name: call.record.name,
        effect: call.tool!.effect,
      });
    }
    const started = Date.now();
    const batch = runBatch(
      planned,
      { ...ids, signal: host.toolSignal },
      () => host.newId("artifact"),
    );
    host.batchStarted(batch);
    const { outcomes, artifacts, rejectedActivity } = await batch;
    const results: NewResults = {
      kind: "tool_results",
      turnId: ids.turnId,
      runId: ids.runId,
      results: outcomes,
    };
    if (!await host.commitResults(results, artifacts)) return;
    for (const outcome of host.observing ? outcomes : []) {
      host.observe("tool.result", {
        callId: outcome.callId,
        name: outcome.name,
        status: outcome.status,
        durationMs: Date.now() - started,
      });
    }

    for (const rejected of rejectedActivity) host.observe("tool.activity_rejected", rejected);

    if (outcomes.some((outcome) => outcome.status === "unknown")) {
      await host.endTurn("failed", {
        code: "effect_outcome_unknown",
        message: "A tool reported that its side effect may or may not have happened",
      });
      return;
    }
    if (repetitionExceeded) {
      await host.endTurn("failed", {
        code: "tool_repetition",
        message: "The model repeated the same tool call four times in a row",
      });
      return;
    }
    corrections = planned.some((call) => call.record.invalid) ? corrections + 1 : 0;
    if (corrections > MAX_CORRECTIONS) {
      await host.endTurn("failed", {
        code: "tool_argument_correction_exhausted",
        message: `The model sent invalid tool arguments ${corrections} times in a row`,
      });
      return;
    }
  }
}

function describeProviderError(error: ProviderError): Record<string, unknown> {
  return {
    status: error.status,
    kind: error.kind,
    retry: error.retry,
    message: error.message.slice(0, 500),
  };
}

function providerFailure(error: unknown): TurnFailure {
  if (error instanceof ProviderError) {
    const provider: NonNullable<TurnFailure["provider"]> = {};
    if (error.status !== undefined) provider.status = error.status;
    if (error.kind !== undefined) provider.kind = error.kind;
    if (error.providerCode !== undefined) provider.providerCode = error.providerCode;
    if (error.requestId !== undefined) provider.requestId = error.requestId;
    return { code: "provider_error", message: error.message, provider };
  }
  return {
    code: "provider_error",
    message: error instanceof Error ? error.message : String(error),
  };
}
