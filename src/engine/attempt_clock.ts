/**
 * The timeouts of one provider attempt — until the first output, between
 * outputs, and for the whole attempt — watched by a single timer. Events
 * only record their time; the timer re-arms itself for the nearest deadline,
 * so a fast stream costs no timer work per event.
 *
 * @module
 */
import type { ProviderTimeouts } from "../config/retry_policy.ts";
import { ProviderError } from "../provider/provider_error.ts";

/** Watches one attempt; `onTimeout` receives the timeout error once. */
export class AttemptClock {
  readonly #timeouts: Required<ProviderTimeouts>;
  readonly #onTimeout: (error: ProviderError) => void;
  readonly #started = Date.now();
  #lastOutput: number | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;

  constructor(timeouts: Required<ProviderTimeouts>, onTimeout: (error: ProviderError) => void) {
    this.#timeouts = timeouts;
    this.#onTimeout = onTimeout;
    this.#arm();
  }

  /** An event arrived. */
  tick(): void {
    this.#lastOutput = Date.now();
  }

  /** The attempt ended; no timeout can fire any more. */
  stop(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #arm(): void {
    const now = Date.now();
    const attemptEnd = this.#started + this.#timeouts.attemptMs;
    const idleEnd = this.#lastOutput === undefined
      ? this.#started + this.#timeouts.firstOutputMs
      : this.#lastOutput + this.#timeouts.betweenOutputsMs;
    const deadline = Math.min(attemptEnd, idleEnd);
    if (now >= deadline) {
      const what = attemptEnd <= idleEnd
        ? `the attempt took ${this.#timeouts.attemptMs} ms`
        : this.#lastOutput === undefined
        ? `no output in ${this.#timeouts.firstOutputMs} ms`
        : `no output for ${this.#timeouts.betweenOutputsMs} ms`;
      this.#timer = undefined;
      this.#onTimeout(
        new ProviderError(`Provider request timed out: ${what}`, {
          retry: "timeout",
          kind: "stream_interrupted",
        }),
      );
      return;
    }
    this.#timer = setTimeout(() => this.#arm(), deadline - now);
  }
}
