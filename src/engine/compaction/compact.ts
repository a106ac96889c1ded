/**
 * One compaction operation: plan the cut, have the agent's own gateway write
 * the summary, rebuild the request, and return the record to commit. Nothing
 * is installed unless the rebuilt request is smaller and fits under the hard
 * limit; a failure leaves a `failed` record and changes nothing else.
 *
 * @module
 */
import type { ObservationDetails, ObservationType } from "../../observation/events.ts";
import type { Agent } from "../../config/agent.ts";
import type { ContextBudget } from "../../context/budget.ts";
import { checkpointText } from "../../context/checkpoint_message.ts";
import type { TokenCounter } from "../../context/token_counter.ts";
import type {
  CompactionEntry,
  CompactionStartedEntry,
  CompactionTrigger,
  TurnFailure,
} from "../../journal/entries.ts";
import type { HistoryMessage } from "../../projection/history/history_message.ts";
import type { Usage } from "../../provider/gateway.ts";
import { ProviderError } from "../../provider/provider_error.ts";
import { callProvider } from "../attempt/provider_call.ts";
import { signalSwitch } from "../attempt/step_abort.ts";
import type { Projection } from "../attempt/request_builder.ts";
import { planCut } from "./plan_cut.ts";
import {
  batchHead,
  COMPACTION_WRITER_PROMPT,
  cutToTokens,
  summaryRequest,
} from "./summary_request.ts";

/** A compaction record before the journal numbers it. */
export type NewCompaction = Omit<CompactionEntry, "seq" | "at">;
/** The start of a compaction before the journal numbers it. */
export type NewCompactionStart = Omit<CompactionStartedEntry, "seq" | "at">;

/** What a compaction needs from its caller. */
export interface CompactionDeps {
  agent: Agent;
  budget: ContextBudget;
  /** Aborts the summary request; an abort installs nothing (whoever stopped the turn records it). */
  signal: AbortSignal;
  /**
   * Commits the start of the operation, before its first summary request,
   * so a cancel or a crash during that request still leaves its record;
   * `false` once the run lost the thread.
   */
  begin(start: NewCompactionStart): Promise<boolean>;
  observe<K extends ObservationType>(type: K, detail: ObservationDetails[K]): void;
  newId(prefix: string): string;
  /** The run's labels: on each summary request, like the run's model requests. */
  labels?: Readonly<Record<string, string>>;
}

/** Opens the reason of a compaction whose summary request itself failed. */
export const SUMMARY_REQUEST_FAILED = "The summary request failed";

/**
 * The turn failure a compaction-only turn ends with when its compaction did
 * not install: `provider_error` when the summary request failed, else
 * `context_compaction_limit` (empty summary, or no saving that fits).
 *
 * @param entry a `failed` compaction
 * @returns the failure, its message the record's reason (numbers, never prompt text)
 */
export function compactionFailure(entry: NewCompaction): TurnFailure {
  const message = entry.reason ?? "The compaction failed";
  return {
    code: message.startsWith(SUMMARY_REQUEST_FAILED)
      ? "provider_error"
      : "context_compaction_limit",
    message,
  };
}

/** Room kept free in each summary request beyond its prompt and output. */
const SUMMARY_REQUEST_MARGIN_TOKENS = 128;

/**
 * Runs one compaction over a projected request.
 *
 * @param deps agent, budget, signal and observation
 * @param projection the request as it would be sent now
 * @param current the current user input (kept verbatim)
 * @param record the turn and run the record belongs to, and what triggered it; with
 *   `operationId`, the operation whose start is already committed (a compaction-only
 *   turn's admission), else a new one, begun just before its first summary request
 * @returns the record: `compacted` (install it), `failed`, or `noop` when nothing can be
 *   summarised; `undefined` when the run lost the thread before the summary request
 * @throws the signal's reason when aborted
 */
export async function compactContext(
  deps: CompactionDeps,
  projection: Projection,
  current: HistoryMessage | undefined,
  record: { turnId: string; runId?: string; trigger: CompactionTrigger; operationId?: string },
): Promise<NewCompaction | undefined> {
  const { agent, budget } = deps;
  // The engine's best figure for the request: raised by confirmed usage when that is more.
  const tokensBefore = projection.projected;
  const entry: NewCompaction = {
    kind: "compaction",
    turnId: record.turnId,
    operationId: record.operationId ?? deps.newId("compaction"),
    trigger: record.trigger,
    status: "failed",
    tokensBefore,
  };
  if (record.runId) entry.runId = record.runId;
  const counter = projection.counter;
  let messageSum = 0;
  for (const message of projection.messages) messageSum += message.tokensBy(counter);
  const fixed = projection.estimate - messageSum;
  const plan = planCut(projection.messages, current, budget, fixed, counter);
  if (!plan) {
    // No summary request is made: an explicit no-op, which the circuit breaker does not count.
    return {
      ...entry,
      status: "noop",
      reason: "Nothing before the current input can be summarised",
    };
  }

  const start: NewCompactionStart = {
    kind: "compaction_started",
    turnId: entry.turnId,
    operationId: entry.operationId,
    trigger: entry.trigger,
    tokensBefore,
  };
  if (entry.runId) start.runId = entry.runId;
  if (record.operationId === undefined && !await deps.begin(start)) return undefined;

  const batches = planBatches(plan.head, budget, counter);
  let summary: string | undefined;
  const usage: Usage = {};
  for (const [index, batch] of batches.entries()) {
    const request = await summaryRequest(batch.text, summary, batch.maxOutputTokens);
    // Not part of the fingerprint, never sent: for gateways that route or meter by them.
    if (deps.labels && Object.keys(deps.labels).length > 0) request.labels = { ...deps.labels };
    try {
      const output = await callProvider(
        agent.gateway,
        request,
        agent.retry,
        signalSwitch(deps.signal),
        {
          onDelta: () => {}, // the summary is not shown while it streams
          onAttempt: (attempt) =>
            deps.observe("compaction.attempt", {
              operationId: entry.operationId,
              batch: index,
              attempt,
            }),
          onRetry: (attempt, delayMs, error) =>
            deps.observe("compaction.retry", {
              operationId: entry.operationId,
              attempt,
              delayMs,
              kind: error.kind,
              status: error.status,
            }),
        },
      );
      addUsage(usage, output.usage);
      summary = output.text.trim();
    } catch (error) {
      if (deps.signal.aborted) throw deps.signal.reason;
      const detail = error instanceof ProviderError
        ? `${error.kind ?? "unknown"}${error.status === undefined ? "" : ` (${error.status})`}`
        : "unknown";
      return withUsage({ ...entry, reason: `${SUMMARY_REQUEST_FAILED}: ${detail}` }, usage);
    }
    if (summary === "") {
      return withUsage({ ...entry, reason: "The summary request returned no text" }, usage);
    }
  }
  summary = cutToTokens(summary!, budget.summaryCeiling, counter);

  let tokensAfter = fixed +
    counter.message({ role: "user", text: checkpointText(summary, plan.keptInputs) });
  for (let i = plan.index; i < projection.messages.length; i++) {
    tokensAfter += projection.messages[i].tokensBy(counter);
  }
  if (tokensAfter >= budget.hardLimit || tokensAfter >= tokensBefore) {
    return withUsage({
      ...entry,
      reason: `The compacted request would not fit: ${tokensAfter} tokens ` +
        `(before ${tokensBefore}, limit ${budget.hardLimit})`,
    }, usage);
  }
  const compacted: NewCompaction = {
    ...entry,
    status: "compacted",
    tokensAfter,
    summary,
    cutSeq: plan.cutSeq,
  };
  if (plan.keptInputs.length > 0) compacted.keptInputs = plan.keptInputs;
  return withUsage(compacted, usage);
}

/**
 * One summary request when the whole head fits in the window with room for a
 * useful summary (its output budget is then what is left, up to the
 * ceiling); otherwise ordered batches that each leave room for the summary
 * so far and a full-ceiling answer.
 */
function planBatches(
  head: readonly HistoryMessage[],
  budget: ContextBudget,
  counter: TokenCounter,
): { text: string; maxOutputTokens: number }[] {
  const room = budget.window - Math.min(Math.floor(budget.window / 100), 4096) -
    counter.requestOverhead - counter.text(COMPACTION_WRITER_PROMPT) -
    SUMMARY_REQUEST_MARGIN_TOKENS;
  const minimum = Math.min(budget.summaryCeiling, Math.max(256, Math.floor(budget.window / 16)));
  const [whole] = batchHead(head, Number.MAX_SAFE_INTEGER, counter);
  const wholeTokens = counter.text(whole ?? "");
  if (wholeTokens + minimum <= room) {
    return [{
      text: whole ?? "",
      maxOutputTokens: Math.min(budget.summaryCeiling, room - wholeTokens),
    }];
  }
  const perBatch = Math.max(256, room - 2 * budget.summaryCeiling);
  return batchHead(head, perBatch, counter).map((text) => ({
    text,
    maxOutputTokens: budget.summaryCeiling,
  }));
}

function addUsage(sum: Usage, usage: Usage | undefined): void {
  for (const [field, value] of Object.entries(usage ?? {}) as [keyof Usage, number][]) {
    if (typeof value === "number") sum[field] = (sum[field] ?? 0) + value;
  }
}

function withUsage(entry: NewCompaction, usage: Usage): NewCompaction {
  if (Object.keys(usage).length > 0) entry.usage = usage;
  return entry;
}
