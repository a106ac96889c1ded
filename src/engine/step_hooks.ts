/**
 * What a run shows while a provider request streams: live deltas, progress
 * per attempt, the retry events. One object per run, re-aimed at each step:
 * building three closures (and an object for them) per step costs more than
 * the calls they make on a fast stream.
 *
 * @module
 */
import type { ProviderRequest } from "../provider/gateway.ts";
import type { ProviderError } from "../provider/provider_error.ts";
import type { ProviderCallHooks } from "./provider_call.ts";
import type { RunHost } from "./run_loop.ts";

/** The provider-call hooks of one run; {@link aim} points them at the step in flight. */
export class StepHooks implements ProviderCallHooks {
  readonly #host: RunHost;
  #step = 0;
  #request: ProviderRequest | undefined;

  /** @param host the thread's side of the run */
  constructor(host: RunHost) {
    this.#host = host;
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

  /** An attempt starts: progress after the first, and an event for observers. */
  onAttempt(attempt: number): void {
    const host = this.#host;
    if (attempt > 1) host.progress("model", this.#step, attempt);
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
    host.progress("retry_wait", this.#step, attempt);
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
