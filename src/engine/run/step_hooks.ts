/**
 * What a run shows while a provider request streams: live deltas, progress
 * per attempt, the retry events. One object per run, re-aimed at each step:
 * building three closures (and an object for them) per step costs more than
 * the calls they make on a fast stream.
 *
 * @module
 */
import type { ResolvedRetryPolicy } from "../../config/retry_policy.ts";
import { nowIso } from "../../journal/now_iso.ts";
import type { RunProgress } from "../../projection/view/view_types.ts";
import type { ProviderRequest } from "../../provider/gateway.ts";
import type { ProviderError } from "../../provider/provider_error.ts";
import type { ProviderCallHooks } from "../attempt/provider_call.ts";
import type { RunHost } from "./run_loop.ts";

/** How often output moves `runProgress.request.lastProgressAt` at most (ms). */
export const PROGRESS_EVERY_MS = 1_000;

/** The provider-call hooks of one run; {@link aim} points them at the step in flight. */
export class StepHooks implements ProviderCallHooks {
  readonly #host: RunHost;
  readonly #policy: ResolvedRetryPolicy | undefined;
  #step = 0;
  #attempt = 1;
  #request: ProviderRequest | undefined;
  /** The attempt in flight as progress shows it (replaced, never changed in place). */
  #shown: NonNullable<RunProgress["request"]> | undefined;
  /** When progress was last published for output (ms), to publish at most once a second. */
  #shownAt = 0;

  /**
   * @param host the thread's side of the run
   * @param policy the agent's retry policy (the retry limit progress shows)
   */
  constructor(host: RunHost, policy?: ResolvedRetryPolicy) {
    this.#host = host;
    this.#policy = policy;
  }

  /**
   * Points the hooks at the next provider request.
   *
   * @param step the step number the request belongs to
   * @param request the frozen request (its fingerprint goes into `provider.attempt` events)
   * @returns the hooks
   */
  aim(step: number, request: ProviderRequest): this {
    this.#step = step;
    this.#request = request;
    return this;
  }

  /** A text or reasoning delta arrived: shown live. */
  onDelta(kind: "thinking" | "assistant", delta: string): void {
    this.#host.liveDelta(this.#step, kind, delta);
  }

  /** Output arrived: the first is shown at once, later ones at most once a second. */
  onOutput(): void {
    const shown = this.#shown;
    if (!shown) return;
    const now = Date.now();
    if (shown.firstOutputAt !== undefined && now - this.#shownAt < PROGRESS_EVERY_MS) return;
    const at = nowIso();
    this.#shownAt = now;
    this.#shown = {
      startedAt: shown.startedAt,
      firstOutputAt: shown.firstOutputAt ?? at,
      lastProgressAt: at,
    };
    this.#host.progress("model", this.#step, this.#attempt, { request: this.#shown });
  }

  /** An attempt starts: progress shows it, and an event for observers. */
  onAttempt(attempt: number): void {
    const host = this.#host;
    const at = nowIso();
    this.#attempt = attempt;
    this.#shown = { startedAt: at, lastProgressAt: at };
    this.#shownAt = Date.now();
    host.progress("model", this.#step, attempt, { request: this.#shown });
    if (host.observing) {
      host.observe("provider.attempt", {
        step: this.#step,
        attempt,
        fingerprint: this.#request!.fingerprint,
      });
    }
  }

  /** An attempt failed and another follows: live output is dropped, the wait is shown. */
  onRetry(attempt: number, delayMs: number, error: ProviderError): void {
    const host = this.#host;
    host.dropLive(this.#step);
    this.#shown = undefined;
    const policy = this.#policy;
    const retry = {
      attempt: attempt + 1,
      // Timeouts have their own, usually smaller, budget of extra attempts.
      limit: 1 +
        (policy === undefined
          ? 0
          : error.retry === "timeout"
          ? Math.min(policy.maxTimeoutRetries, policy.delaysMs.length)
          : policy.delaysMs.length),
      nextAttemptAt: new Date(Date.now() + delayMs).toISOString(),
      reason: error.kind ?? (error.status === undefined ? "unknown" : `http_${error.status}`),
    };
    host.progress("retry_wait", this.#step, attempt, { retry });
    host.observe("provider.retry", {
      step: this.#step,
      attempt,
      delayMs,
      status: error.status,
      kind: error.kind,
      retry: error.retry,
      message: error.message.slice(0, 500),
    });
  }
}
