/**
 * The timeouts of one provider attempt — until the first output, between
 * outputs, and for the whole attempt. Events only record their time; a clock
 * is looked at when its nearest deadline comes, and then either times out or
 * moves its deadline on, so a fast stream costs no timer work per event.
 *
 * One timer serves every running clock (see {@link ClockTimer}): a fast
 * attempt ends long before its deadline, and arming and clearing a timer of
 * its own on every attempt cost more than the rest of the attempt's
 * bookkeeping.
 *
 * @module
 */
import type { ProviderTimeouts } from "../../config/retry_policy.ts";
import { ProviderError } from "../../provider/provider_error.ts";
import { ClockTimer } from "./clock_timer.ts";

/** What a clock tells when its attempt times out. */
export interface TimeoutTarget {
  abort(reason: unknown): void;
}

/** The running clocks and their one timer. */
const timer = new ClockTimer<AttemptClock>((clock, now) => clock.check(now));

/** Watches one attempt; on timeout it keeps the error and aborts the attempt, once. */
export class AttemptClock {
  readonly #timeouts: Required<ProviderTimeouts>;
  readonly #target: TimeoutTarget;
  readonly #started = Date.now();
  #lastOutput: number | undefined;
  #running = false;
  /** When the clock is next looked at (its nearest deadline, as last computed). */
  due = 0;
  /** The timeout, once it happened. */
  timedOut: ProviderError | undefined;

  /**
   * @param timeouts the attempt's limits
   * @param target aborted with the timeout error when a limit passes
   */
  constructor(timeouts: Required<ProviderTimeouts>, target: TimeoutTarget) {
    this.#timeouts = timeouts;
    this.#target = target;
    this.check(this.#started);
  }

  /**
   * Output arrived (text, reasoning, a tool call's part, the finish). Usage
   * events, empty deltas and heartbeats are not output and never call this:
   * a stream that only keeps its connection alive still times out.
   */
  tick(): void {
    const first = this.#lastOutput === undefined;
    this.#lastOutput = Date.now();
    // The first output swaps the first-output deadline for the (often much
    // shorter) between-outputs one: the shared timer must be re-aimed at it,
    // or it would only look again when the first-output deadline came.
    if (first && this.#running) this.check(this.#lastOutput);
  }

  /** The attempt ended; no timeout can fire any more. */
  stop(): void {
    if (!this.#running) return;
    this.#running = false;
    timer.remove(this);
  }

  /**
   * Times out when a deadline has passed at `now`, otherwise waits for the
   * nearest one (called by the shared timer when `due` has come).
   *
   * @param now the current time, ms since the epoch
   */
  check(now: number): void {
    const attemptEnd = this.#started + this.#timeouts.attemptMs;
    const idleEnd = this.#lastOutput === undefined
      ? this.#started + this.#timeouts.firstOutputMs
      : this.#lastOutput + this.#timeouts.betweenOutputsMs;
    const deadline = Math.min(attemptEnd, idleEnd);
    if (now < deadline) {
      const earlier = deadline < this.due;
      this.due = deadline;
      if (!this.#running) {
        this.#running = true;
        timer.add(this);
      } else if (earlier) timer.add(this); // re-arms the shared timer for the nearer deadline
      return;
    }
    const what = attemptEnd <= idleEnd
      ? `the attempt took ${this.#timeouts.attemptMs} ms`
      : this.#lastOutput === undefined
      ? `no output in ${this.#timeouts.firstOutputMs} ms`
      : `no output for ${this.#timeouts.betweenOutputsMs} ms`;
    this.stop();
    this.timedOut = new ProviderError(`Provider request timed out: ${what}`, {
      retry: "timeout",
      kind: "stream_interrupted",
      timeoutStage: attemptEnd <= idleEnd
        ? "attempt"
        : this.#lastOutput === undefined
        ? "first_output"
        : "between_outputs",
    });
    this.#target.abort(this.timedOut);
  }
}
