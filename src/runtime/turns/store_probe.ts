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

interface Probe {
  timer: ReturnType<typeof setTimeout> | undefined;
  /** Asked for again while an attempt ran: run once more after it. */
  again: boolean;
}

/** One probe per key (a thread), stoppable all at once at shutdown. */
export class StoreProbes {
  readonly #probes = new Map<string, Probe>();
  #stopped = false;

  /**
   * Runs `attempt` after a short pause, and again with a doubling pause
   * (at most {@link PROBE_MAX_DELAY_MS}) while it throws. Asking again for
   * a key that is being probed runs the attempt once more after the current
   * one, so a request made while an attempt was under way is never lost.
   *
   * @param key what is probed (a thread id)
   * @param attempt re-reads and settles; throws while the store fails
   */
  start(key: string, attempt: () => Promise<void>): void {
    if (this.#stopped) return;
    const existing = this.#probes.get(key);
    if (existing) {
      existing.again = true;
      return;
    }
    const probe: Probe = { timer: undefined, again: false };
    this.#probes.set(key, probe);
    const schedule = (delay: number): void => {
      probe.timer = setTimeout(async () => {
        probe.timer = undefined;
        probe.again = false;
        let failed = false;
        try {
          await attempt();
        } catch {
          failed = true;
        }
        if (this.#stopped) return;
        if (failed) return schedule(Math.min(delay * 2, PROBE_MAX_DELAY_MS));
        if (probe.again) return schedule(PROBE_FIRST_DELAY_MS);
        this.#probes.delete(key);
      }, delay);
    };
    schedule(PROBE_FIRST_DELAY_MS);
  }

  /** Whether a key is being probed. */
  has(key: string): boolean {
    return this.#probes.has(key);
  }

  /** Stops every probe (shutdown). */
  stop(): void {
    this.#stopped = true;
    for (const probe of this.#probes.values()) clearTimeout(probe.timer);
    this.#probes.clear();
  }
}
