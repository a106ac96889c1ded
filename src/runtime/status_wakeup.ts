/**
 * Promises that settle at a thread's next status change (`waitForIdle` waits
 * on them).
 *
 * @module
 */

/** Hands out promises for the next change and settles them all when it comes. */
export class StatusWakeup {
  // The resolvers themselves wait (no wrapper closure per wait: every waitForIdle asks for one).
  readonly #waiters = new Set<() => void>();

  /** Resolves at the next {@link wakeAll}. */
  next(): Promise<void> {
    return new Promise((resolve) => void this.#waiters.add(resolve));
  }

  /** Settles every promise given out so far; later ones wait for the next change. */
  wakeAll(): void {
    if (this.#waiters.size === 0) return;
    const waiters = [...this.#waiters];
    this.#waiters.clear();
    for (const wake of waiters) wake();
  }
}
