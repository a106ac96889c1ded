/**
 * The model loop of one run: request, stream, commit the step, validate and
 * run tools, commit their results, and go again until the model stops or a
 * limit ends the turn.
 *
 * @module
 */
import type { ObservationDetails, ObservationType } from "../../observation/events.ts";
import type { Agent } from "../../config/agent.ts";
import type {
  NewEntry,
  StepEntry,
  SupplementalContext,
  ToolResultsEntry,
  TurnFailure,
  TurnOutcome,
} from "../../journal/entries.ts";
import type { HistoryReader } from "../../projection/history/history_model.ts";
import type { InteractionsReader } from "../../projection/interactions.ts";
import type { OpenCallsReader } from "../../projection/open_calls.ts";
import type { ProviderMessage, Usage } from "../../provider/gateway.ts";
import {
  observeDispatched,
  observeOpened,
  observeResults,
  settleBatch,
} from "../calls/batch_settlement.ts";
import { type Opener, openForCalls, openForInputs } from "../calls/interaction_plan.ts";
import { ProviderError } from "../../provider/provider_error.ts";
import { needsDispatchMarker } from "../../tools/define_tool.ts";
import { CommitFailures } from "./commit_failures.ts";
import { ContractViolation } from "./contract_violation.ts";
import { describeThrown } from "./host_code.ts";
import { callProvider, type StepOutput } from "../attempt/provider_call.ts";
import { stateKeyOf } from "../attempt/request_builder.ts";
import { requestTooLarge } from "../attempt/request_size.ts";
import { observeUsage } from "./usage_report.ts";
import { evidenceOf } from "../attempt/failure_evidence.ts";
import { withoutSupplementalTrace } from "../attempt/supplemental_trace.ts";
import type { NewCompaction } from "../compaction/compact.ts";
import { ContextGuard } from "./context_guard.ts";
import { StepHooks } from "./step_hooks.ts";
import { planCalls, type PlannedCall, RepetitionGuard } from "../calls/tool_calls.ts";
import type { Artifact, RunProgress } from "../../projection/view/view_types.ts";
import { type BatchContext, runBatch } from "../calls/tool_runner.ts";
import { settledBatch } from "../calls/settled_batch.ts";
import { rerunInterrupted } from "../calls/interrupted_rerun.ts";
import type { StopSwitch } from "../attempt/step_abort.ts";

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
  /** The turn's supplemental context (memory only), sent after the current user input. */
  readonly supplementalContext?: readonly SupplementalContext[] | undefined;
  /** The turn's run labels (`send({ labels })`), `{}` when it has none; frozen. */
  readonly labels: Readonly<Record<string, string>>;
  /** Approvals and questions of the thread. */
  readonly interactions: InteractionsReader;
  /** Calls of the turn without a result. */
  readonly openCalls: OpenCallsReader;
  /** The switch of the next provider request: a stop or a steer aborts it. */
  stepSignal(): StopSwitch;
  /** Steering messages that reached this run so far. */
  steerCount(): number;
  /** Whether the last final step was kept open because a steer arrived; clears the flag. */
  takeSteered(): boolean;
  /** Answers messages with secret values, for this run's requests only. */
  secrets(): ReadonlyMap<string, ProviderMessage>;
  /** Commits entries of this turn (interactions, dispatch markers, results). */
  commitEntries(entries: NewEntry[], artifacts: Artifact[]): Promise<boolean>;
  /**
   * The turn waits for people: commits status `waiting` and lets the run go,
   * unless a resolution committed meanwhile gives it work (`runnable`).
   */
  park(): Promise<"parked" | "runnable" | "lost">;
  /** Aborts the provider request; whenever it is aborted, {@link stopRequested} is true. */
  readonly signal: AbortSignal;
  /** Aborts tool handlers; whenever it is aborted, {@link stopRequested} is true. */
  readonly toolSignal: AbortSignal;
  stopRequested(): boolean;
  progress(
    phase: "model" | "tools" | "retry_wait",
    step: number,
    attempt?: number,
    detail?: Pick<RunProgress, "request" | "retry">,
  ): void;
  liveDelta(step: number, kind: "thinking" | "assistant", delta: string): void;
  dropLive(step: number): void;
  /** With `end`, the step ends the turn unless a steer arrived since `steers` was read. */
  commitStep(
    step: NewStep,
    end?: { outcome: TurnOutcome; steers?: number },
    also?: NewEntry[],
  ): Promise<boolean>;
  commitResults(results: NewResults, artifacts: Artifact[], also?: NewEntry[]): Promise<boolean>;
  /** Records a compaction operation (and installs its checkpoint when it compacted). */
  commitCompaction(entry: NewCompaction): Promise<boolean>;
  endTurn(outcome: TurnOutcome, failure?: TurnFailure): Promise<boolean>;
  batchStarted(batch: Promise<unknown>): void;
  /**
   * Admits child facts not yet on the thread's path (agents with
   * `parentEvents`), before a provider request; `false` once the run lost the thread.
   */
  admitChildEvents?(): Promise<boolean>;
  /** The usage of every turn of the thread, for the `usage` observation's totals. */
  threadUsage?(): Usage | undefined;
  /** A signal for the next tool batch that a steer aborts (its `read`/`none` calls end). */
  toolSteerSignal?(): AbortSignal | undefined;
  /** The thread's goal as the model reads it in each request, when it has one. */
  goalNote?(): string | undefined;
  /**
   * Whether the turn, about to end naturally, should be asked once more to
   * reflect on its goal; when so, returns the note entry to commit with the step.
   */
  goalReflection?(): NewEntry | undefined;
  /** Whether anyone listens; events (and their details) are built only then. */
  readonly observing: boolean;
  observe<K extends ObservationType>(type: K, detail: ObservationDetails[K]): void;
  newId(prefix: string): string;
}

/** Regenerations allowed per correction episode before the turn fails. */
export const MAX_CORRECTIONS = 2;
/** `length` finishes continued per turn. */
export const MAX_LENGTH_CONTINUATIONS = 2;

/**
 * Runs one turn until it ends or the run loses the thread. Whatever breaks
 * inside the loop — a gateway's contract, host code outside its guard, an
 * engine bug — ends the turn `failed` with `engine_contract`, so the thread
 * never claims `running` with nothing running. Only a failed commit escapes:
 * the store did not answer, so nothing more can be written now.
 *
 * @param agent the turn's agent
 * @param host the thread's side of the loop
 * @param ids the run's identity
 * @throws the error of a commit that failed (the caller settles the turn once the store answers)
 */
export function runTurn(
  agent: Agent,
  host: RunHost,
  ids: { threadId: string; turnId: string; runId: string },
): Promise<void> {
  // runGuarded's own promise (it is async, so it never throws here): no
  // async frame of this function's own and no extra turn of the queue per run.
  return runGuarded(host, (guarded) => loop(agent, guarded, ids));
}

/**
 * Runs a turn's body (the model loop, or a compaction-only turn) so that
 * whatever it throws, other than a failed commit, ends the turn `failed` with
 * `engine_contract`.
 *
 * @param host the thread's side of the run
 * @param body the turn's work, given the host with its commits marked
 * @throws the error of a commit that failed (the caller settles the turn once the store answers)
 */
export async function runGuarded(
  host: RunHost,
  body: (guarded: RunHost) => Promise<void>,
): Promise<void> {
  const commits = new CommitFailures();
  const guarded = commits.wrap(host);
  try {
    await body(guarded);
  } catch (error) {
    const commitError = commits.causeOf(error);
    if (commitError !== undefined) throw commitError;
    if (host.signal.aborted && host.stopRequested()) return;
    const message = error instanceof ContractViolation
      ? error.message
      : `The run failed inside the engine: ${describeThrown(error)}`;
    if (commits.liveStep !== undefined) host.dropLive(commits.liveStep);
    await guarded.endTurn("failed", { code: "engine_contract", message: message.slice(0, 2000) })
      .catch((endError) => {
        throw commits.causeOf(endError) ?? endError;
      });
  }
}

/**
 * The model loop itself, inside a guarded body: what a compaction turn with
 * `continueGoal` runs after its checkpoint is installed.
 */
export function continueTurn(
  agent: Agent,
  host: RunHost,
  ids: { threadId: string; turnId: string; runId: string },
): Promise<void> {
  return loop(agent, host, ids);
}

async function loop(
  agent: Agent,
  host: RunHost,
  ids: { threadId: string; turnId: string; runId: string },
): Promise<void> {
  const guard = new RepetitionGuard();
  let step = 0;
  let corrections = 0;
  let lengthContinuations = 0;
  let emptyRetried = false;
  // The provider refused the last attempt as too large: compact and resend once.
  let overflowed = false;
  const context = new ContextGuard(agent, host, ids);
  // Made once per run, not per step: the provider hooks, the interaction opener,
  // the tools' context and their artifact ids.
  const hooks = new StepHooks(host, agent.retry);
  // Fields one by one, not a spread of `ids` (a spread inside a literal copies through the runtime).
  const opener: Opener & { threadId: string } = {
    threadId: ids.threadId,
    turnId: ids.turnId,
    runId: ids.runId,
    newId: idsOf(host),
  };
  const toolContext = new RunToolContext(ids, host);
  const newArtifactId = artifactIdsOf(host);
  // A resumed run (after `respond`) first finishes the batch its turn waits on.
  if (host.openCalls.list().length > 0 || host.interactions.pendingOf(ids.turnId).length > 0) {
    if (await settleBatch(agent, host, ids) === "return") return;
  }
  // A resumed retry first runs again the safe calls a crash cut off (DESIGN §11).
  if (
    host.openCalls.interrupted().length > 0 &&
    await rerunInterrupted(agent, host, ids) === "return"
  ) return;
  for (;;) {
    // Every stop request aborts `host.signal` and sets `stopRequested()` first:
    // the flag alone answers, without making the signal.
    if (host.stopRequested()) return;
    if (step >= agent.maxSteps) {
      await host.endTurn("failed", {
        code: "max_steps",
        message: `The turn reached its limit of ${agent.maxSteps} model requests`,
      });
      return;
    }
    const stepNo = step++;
    if (agent.parentEvents && host.admitChildEvents && !await host.admitChildEvents()) return;
    const preparing = context.prepare(overflowed);
    const prepared = preparing instanceof Promise ? await preparing : preparing;
    if (!prepared) return;
    const { request } = prepared;
    const tooLarge = requestTooLarge(agent, request);
    if (tooLarge) {
      await host.endTurn("failed", tooLarge);
      return;
    }
    // Progress of attempt 1 (and each later one) is set by the hooks as it starts.
    const steers = host.steerCount();
    const stepSignal = host.stepSignal();
    let output: StepOutput;
    try {
      output = await callProvider(
        agent.gateway,
        request,
        agent.retry,
        stepSignal,
        hooks.aim(stepNo, request),
      );
    } catch (error) {
      if (host.signal.aborted) return;
      if (error instanceof ContractViolation) throw error;
      if (stepSignal.aborted) {
        host.dropLive(stepNo); // steered: the next request carries the new instruction
        continue;
      }
      host.dropLive(stepNo);
      if (error instanceof ProviderError && error.kind === "context_overflow") {
        if (overflowed) {
          await host.endTurn("failed", {
            code: "context_compaction_limit",
            message: "The provider refused the request as too large again after compaction",
          });
          return;
        }
        overflowed = true;
        step = stepNo; // the resend is the same step
        continue;
      }
      await host.endTurn("failed", providerFailure(error));
      return;
    }
    overflowed = false;
    // Told after the step's commit (below), when the usage is in the journal.
    const usageReport = output.usage && host.observing
      ? {
        step: stepNo,
        usage: output.usage,
        estimateTokens: prepared.projection.estimate,
        windowTokens: context.windowTokens,
      }
      : undefined;

    const entry: NewStep = {
      kind: "step",
      turnId: ids.turnId,
      runId: ids.runId,
      step: stepNo,
      text: output.text,
      calls: [],
      finish: output.finish,
      stateKey: stateKeyOf(agent),
    };
    if (output.reasoning) entry.reasoning = output.reasoning;
    if (output.usage) entry.usage = output.usage;
    if (output.state !== undefined) entry.state = output.state;
    if (output.hosted) entry.hosted = output.hosted;
    if (output.sources && output.text) entry.sources = output.sources;
    // Supplemental context is never stored: nothing measured or continued with it may be.
    if (host.supplementalContext?.length) withoutSupplementalTrace(entry);

    if (output.calls.length === 0) {
      if (output.text === "" && output.finish === "stop" && !emptyRetried) {
        emptyRetried = true; // an empty answer is asked for again, once
        host.dropLive(stepNo);
        continue;
      }
      if (output.finish === "length" && lengthContinuations < MAX_LENGTH_CONTINUATIONS) {
        lengthContinuations++;
        if (!await host.commitStep(entry)) return;
        if (usageReport) observeUsage(host, usageReport);
        continue;
      }
      const reflection = agent.goals ? host.goalReflection?.() : undefined;
      if (reflection !== undefined) {
        // Goal reflection: the answer stays, a runtime note asks for a review, and the turn goes on.
        const reflected = await host.commitStep(entry, undefined, [reflection]);
        if (reflected && usageReport) observeUsage(host, usageReport);
        if (!reflected) return;
        continue;
      }
      const committed = await host.commitStep(entry, { outcome: "completed", steers });
      if (committed && usageReport) observeUsage(host, usageReport);
      if (host.takeSteered()) continue;
      return;
    }

    const { planned, repetitionExceeded } = planCalls(agent, output.calls, guard, toolContext);
    entry.calls = planned.map((call) => call.record);
    // Approvals and questions open in the same commit as the step that needs them.
    const opened = openForCalls(planned, opener);
    const runnable: PlannedCall[] = [];
    const dispatched: string[] = [];
    for (const call of planned) {
      const { record } = call;
      if (
        !call.tool || record.invalid || record.repeated || record.decision !== "allow" ||
        record.interactionId !== undefined
      ) continue;
      runnable.push(call);
      if (needsDispatchMarker(call.tool!.effect)) dispatched.push(record.callId);
    }
    if (dispatched.length > 0) entry.dispatched = dispatched;
    if (!await host.commitStep(entry, undefined, opened)) return;
    if (usageReport) observeUsage(host, usageReport);
    observeOpened(host, opened);

    host.progress("tools", stepNo);
    // Events (and the clock their durations need) only when someone listens.
    const started = observeDispatched(host, runnable);
    toolContext.steerSignal = host.toolSteerSignal?.();
    const settling = settledBatch(
      host,
      runBatch(
        opened.length === 0 ? planned : planned.filter((call) => !call.record.interactionId),
        toolContext,
        newArtifactId,
      ),
    );
    const { outcomes, artifacts, inputs, rejectedActivity } = settling instanceof Promise
      ? await settling
      : settling;
    const results: NewResults = {
      kind: "tool_results",
      turnId: ids.turnId,
      runId: ids.runId,
      results: outcomes,
    };
    const asked = openForInputs(inputs, opener);
    if (
      (outcomes.length > 0 || asked.length > 0) &&
      !await host.commitResults(results, artifacts, asked)
    ) return;
    observeOpened(host, asked);
    observeResults(host, outcomes, started);

    for (const rejected of rejectedActivity) host.observe("tool.activity_rejected", rejected);

    if (anyUnknown(outcomes)) {
      await host.endTurn("failed", {
        code: "effect_outcome_unknown",
        message: "A tool reported that its side effect may or may not have happened",
      });
      return;
    }
    if (opened.length > 0 || asked.length > 0) {
      if (await settleBatch(agent, host, ids) === "return") return;
    }
    if (repetitionExceeded) {
      await host.endTurn("failed", {
        code: "tool_repetition",
        message: "The model repeated the same tool call four times in a row",
      });
      return;
    }
    corrections = anyInvalid(planned) ? corrections + 1 : 0;
    if (corrections > MAX_CORRECTIONS) {
      await host.endTurn("failed", {
        code: "tool_argument_correction_exhausted",
        message: `The model sent invalid tool arguments ${corrections} times in a row`,
      });
      return;
    }
  }
}

// Plain loops rather than `some` with a closure made per step.

/** Whether a tool reported that its side effect may or may not have happened. */
function anyUnknown(outcomes: readonly { status: string }[]): boolean {
  for (const outcome of outcomes) if (outcome.status === "unknown") return true;
  return false;
}

/** Whether the model sent invalid arguments for any call of the step. */
function anyInvalid(planned: readonly PlannedCall[]): boolean {
  for (const call of planned) if (call.record.invalid) return true;
  return false;
}

// Made by functions rather than inline: under esbuild's keepNames a named
// closure pays a `name` definition each time it is made.

/** The host's id allocator as a plain function. */
function idsOf(host: RunHost): (prefix: string) => string {
  return (prefix) => host.newId(prefix);
}

/**
 * The tools' context of a run, whose signal is the host's, read when a
 * handler reads it. A class: its getter lives once on the prototype, where an
 * object literal with a getter defines an accessor on every run's object.
 */
class RunToolContext implements BatchContext {
  readonly threadId: string;
  readonly turnId: string;
  readonly runId: string;
  /** The turn's run labels (frozen; `{}` when none). */
  readonly labels: Readonly<Record<string, string>>;
  /** Aborted by a steer during the batch (see tool_runner's steered calls). */
  steerSignal: AbortSignal | undefined;
  readonly #host: RunHost;

  constructor(ids: { threadId: string; turnId: string; runId: string }, host: RunHost) {
    this.threadId = ids.threadId;
    this.turnId = ids.turnId;
    this.runId = ids.runId;
    this.labels = host.labels;
    this.#host = host;
  }

  get signal(): AbortSignal {
    return this.#host.toolSignal;
  }
}

/** Allocates artifact ids from the host. */
function artifactIdsOf(host: RunHost): () => string {
  return () => host.newId("artifact");
}

function providerFailure(error: unknown): TurnFailure {
  if (error instanceof ProviderError) {
    const provider: NonNullable<TurnFailure["provider"]> = {};
    if (error.status !== undefined) provider.status = error.status;
    if (error.kind !== undefined) provider.kind = error.kind;
    if (error.providerCode !== undefined) provider.providerCode = error.providerCode;
    if (error.requestId !== undefined) provider.requestId = error.requestId;
    const evidence = evidenceOf(error);
    if (evidence) provider.evidence = evidence;
    return { code: "provider_error", message: error.message, provider };
  }
  return {
    code: "provider_error",
    message: error instanceof Error ? error.message : String(error),
  };
}
