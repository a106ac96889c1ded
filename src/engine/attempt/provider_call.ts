/**
 * One logical provider request: attempts with timeouts, retries by the
 * provider's advice, and the assembly of streamed events into a step output.
 *
 * @module
 */
import type { ResolvedRetryPolicy } from "../../config/retry_policy.ts";
import type { Gateway, ProviderEvent, ProviderRequest } from "../../provider/gateway.ts";
import { ProviderError } from "../../provider/provider_error.ts";
import { AttemptAbort } from "./attempt_abort.ts";
import { AttemptClock } from "./attempt_clock.ts";
import { ContractViolation } from "../run/contract_violation.ts";
import { BoundedReads } from "./bounded_reads.ts";
import { describeThrown } from "../run/host_code.ts";
import { StepAssembly, type StepOutput, streamBroken } from "./step_assembly.ts";
import type { StopSwitch } from "./step_abort.ts";

export type { StepOutput } from "./step_assembly.ts";

/** Callbacks that let the run show progress while the request runs. */
export interface ProviderCallHooks {
  /** A text or reasoning delta arrived. */
  onDelta(kind: "thinking" | "assistant", delta: string): void;
  /** An attempt starts (1-based). */
  onAttempt(attempt: number): void;
  /** An attempt failed and another follows after `delayMs`; live output must be dropped. */
  onRetry(attempt: number, delayMs: number, error: ProviderError): void;
}

/**
 * Runs a frozen request to completion, retrying per the policy.
 *
 * @param signal stops the request: a run's step switch, or a signal of the
 *   engine's own controller (a title's limit) through `signalSwitch`
 * @returns the assembled output
 * @throws the final `ProviderError`, or the switch's reason when aborted
 */
export function callProvider(
  gateway: Gateway,
  request: ProviderRequest,
  policy: ResolvedRetryPolicy,
  signal: StopSwitch,
  hooks: ProviderCallHooks,
): Promise<StepOutput> {
  // The first attempt (nearly always the only one) is its own promise, with a
  // `catch` for the rare retry: no async frame of this function's around it.
  try {
    if (signal.aborted) throw signal.reason;
    hooks.onAttempt(1);
    return runAttempt(gateway, request, policy, signal, hooks).catch((error: unknown) =>
      retried(gateway, request, policy, signal, hooks, error)
    );
  } catch (error) {
    return Promise.reject(error);
  }
}

/**
 * The attempts after a first one that failed with `firstError`, as the policy allows.
 *
 * @throws the final `ProviderError`, or the switch's reason when aborted
 */
async function retried(
  gateway: Gateway,
  request: ProviderRequest,
  policy: ResolvedRetryPolicy,
  signal: StopSwitch,
  hooks: ProviderCallHooks,
  firstError: unknown,
): Promise<StepOutput> {
  const budget: RetryBudget = { firstFailureAt: undefined, timeoutRetries: 0 };
  let error = firstError;
  for (let attempt = 1;; attempt++) {
    await sleep(retryDelay(policy, signal, hooks, budget, attempt, error), signal);
    if (signal.aborted) throw signal.reason;
    hooks.onAttempt(attempt + 1);
    try {
      return await runAttempt(gateway, request, policy, signal, hooks);
    } catch (next) {
      error = next;
    }
  }
}

/** What the retries of one request have used of the policy. */
interface RetryBudget {
  firstFailureAt: number | undefined;
  timeoutRetries: number;
}

/**
 * The wait before the attempt after `attempt`, which failed with `error`,
 * once the hooks were told; throws when no retry is allowed.
 *
 * @throws the switch's reason when aborted, a contract violation, or the failure itself
 */
function retryDelay(
  policy: ResolvedRetryPolicy,
  signal: StopSwitch,
  hooks: ProviderCallHooks,
  budget: RetryBudget,
  attempt: number,
  error: unknown,
): number {
  if (signal.aborted) throw signal.reason;
  if (error instanceof ContractViolation) throw error;
  const failure = asProviderError(error);
  const firstFailureAt = budget.firstFailureAt ??= Date.now();
  const extra = attempt; // the extra attempt this retry would be
  const delay = nextDelay(policy, failure, extra);
  // A request too large for the window fails the same way every time: compaction, not a retry, helps.
  const allowed = failure.retry !== "never" && failure.kind !== "context_overflow" &&
    delay !== undefined &&
    (failure.retry !== "timeout" || budget.timeoutRetries < policy.maxTimeoutRetries) &&
    Date.now() + delay - firstFailureAt <= policy.windowMs;
  if (!allowed) throw failure;
  if (failure.retry === "timeout") budget.timeoutRetries++;
  hooks.onRetry(attempt, delay, failure);
  return delay;
}

function nextDelay(
  policy: ResolvedRetryPolicy,
  failure: ProviderError,
  extra: number,
): number | undefined {
  const base = policy.delaysMs[extra - 1];
  if (base === undefined) return undefined;
  const jittered = Math.round(base * (0.8 + Math.random() * 0.4));
  if (failure.retryAfterMs !== undefined && failure.retryAfterMs > jittered) {
    return Math.min(failure.retryAfterMs, 60_000);
  }
  return jittered;
}

async function runAttempt(
  gateway: Gateway,
  request: ProviderRequest,
  policy: ResolvedRetryPolicy,
  outer: StopSwitch,
  hooks: ProviderCallHooks,
): Promise<StepOutput> {
  const attempt = new AttemptAbort();
  const abortFromOuter = follower(attempt, outer);
  outer.watch(abortFromOuter);
  const clock = new AttemptClock(policy.timeouts, attempt);
  const assembly = new StepAssembly(hooks, clock);
  // The gateway is host code: its iterator may never answer and may ignore the
  // signal. Reading is bounded by our own abort (timeouts, cancel, shutdown),
  // so the attempt ends on time; the abandoned stream's later events are never read.
  let iterator: AsyncIterator<ProviderEvent> | undefined;
  try {
    iterator = openStream(gateway, request, attempt);
    await new BoundedReads(iterator, attempt).drain(assembly);
  } catch (error) {
    throw clock.timedOut ?? error;
  } finally {
    clock.stop();
    outer.unwatch(abortFromOuter);
    // Let the gateway clean up, without waiting for a gateway that never answers.
    if (iterator) releaseStream(iterator);
  }
  if (clock.timedOut) throw clock.timedOut;
  if (outer.aborted) throw outer.reason;
  if (!assembly.finished) throw streamBroken("the stream ended without a finish event");
  return assembly.output;
}

/**
 * The watcher that aborts an attempt when the step signal does. Made by a
 * function, not inline: a named closure per attempt costs a `name`
 * definition under some transpilers (esbuild's keepNames).
 */
function follower(attempt: AttemptAbort, outer: StopSwitch): () => void {
  return () => attempt.abort(outer.reason);
}

function openStream(
  gateway: Gateway,
  request: ProviderRequest,
  attempt: AttemptAbort,
): AsyncIterator<ProviderEvent> {
  const stream = gateway.stream(request, attempt.options);
  const open = (stream as Partial<AsyncIterable<ProviderEvent>>)?.[Symbol.asyncIterator];
  if (typeof open !== "function") {
    throw new ProviderError("Gateway failed: stream() did not return an async iterable", {
      retry: "never",
      kind: "unknown",
    });
  }
  return open.call(stream);
}

/**
 * Asks the gateway's iterator to clean up, without waiting for it. Its
 * cleanup is host code whose outcome cannot change the attempt's, which is
 * settled already: a throw or a rejection of it is dropped, on purpose.
 * (A direct `try`, not `callHostCodeSync`: no closure and no outcome object
 * per attempt for a failure nobody reads.)
 */
function releaseStream(iterator: AsyncIterator<ProviderEvent>): void {
  let returned: unknown;
  try {
    returned = iterator.return?.();
  } catch {
    return;
  }
  if (returned && typeof (returned as PromiseLike<unknown>).then === "function") {
    (returned as PromiseLike<unknown>).then(undefined, ignoreCleanupFailure);
  }
}

/** The rejection handler of an iterator's cleanup (see {@link releaseStream}). */
function ignoreCleanupFailure(): void {}

function asProviderError(error: unknown): ProviderError {
  if (error instanceof ProviderError) return error;
  return new ProviderError(
    `Gateway failed: ${
      error instanceof Error ? describeThrown(error.message) : describeThrown(error)
    }`,
    {
      retry: "never",
      kind: "unknown",
      cause: error,
    },
  );
}

function sleep(ms: number, signal: StopSwitch): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.unwatch(onAbort);
      resolve();
    }, ms);
    signal.watch(onAbort);
  });
}
