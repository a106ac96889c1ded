/**
 * Promises that settle at a thread's next status change (`waitForIdle` waits
 * on them).
 *
 * @module
 */

/** Hands out promises for the next change and settles them all when it comes. */
export class StatusWakeup {
  // The resolvers themselves wait (no wrapper closure per wait: every waitForIdle asks for one).
  // Made by the first wait and handed over whole at the wake: an idle cached
  // actor keeps no emptied set, and a wake copies nothing.
  #waiters: Set<() => void> | undefined;

  /** Resolves at the next {@link wakeAll}. */
  next(): Promise<void> {
    return new Promise((resolve) => void (this.#waiters ??= new Set()).add(resolve));
  }

  /** Settles every promise given out so far; later ones wait for the next change. */
  wakeAll(): void {
    const waiters = this.#waiters;
    if (waiters === undefined) return;
    this.#waiters = undefined;
    for (const wake of waiters) wake();
  }
}
