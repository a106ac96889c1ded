/**
 * Waiting for a store to answer again. When a commit fails (it threw, or
 * its reply was lost), what the store holds is unknown and a run may have
 * died with its turn still active. A probe re-reads the thread with a
 * backoff that yields to the event loop until the store answers, then
 * settles what it finds, without waiting for another command, so
 * `waitForIdle` resolves by itself.
 *
 * @module
 */

/** The first pause before probing a store that failed, in ms. */
export const PROBE_FIRST_DELAY_MS = 20;
/** The longest pause between two probes, in ms. */
export const PROBE_MAX_DELAY_MS = 2_000;

/** One probe per key (a thread), stoppable all at once at shutdown. */
export class StoreProbes {
  readonly #timers = new Map<string, ReturnType<typeof setTimeout>>();
  #stopped = false;

  /**
   * Runs `attempt` after a short pause, and again with a doubling pause
   * (at most {@link PROBE_MAX_DELAY_MS}) while it throws. A key already
   * being probed is left to its probe.
   *
   * @param key what is probed (a thread id)
   * @param attempt re-reads and settles; throws while the store fails
   */
  start(key: string, attempt: () => Promise<void>): void {
    if (this.#stopped || this.#timers.has(key)) return;
    const run = (delay: number): void => {
      const timer = setTimeout(async () => {
        try {
          await attempt();
          this.#timers.delete(key);
        } catch {
          if (this.#stopped) return;
          run(Math.min(delay * 2, PROBE_MAX_DELAY_MS));
        }
      }, delay);
      this.#timers.set(key, timer);
    };
    run(PROBE_FIRST_DELAY_MS);
  }

  /** Whether a key is being probed. */
  has(key: string): boolean {
    return this.#timers.has(key);
  }

  /** Stops every probe (shutdown). */
  stop(): void {
    this.#stopped = true;
    for (const timer of this.#timers.values()) clearTimeout(timer);
    this.#timers.clear();
  }
}
