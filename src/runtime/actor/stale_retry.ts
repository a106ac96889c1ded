/**
 * The one retry of a write that lost a race: when another writer changed the
 * thread first, the actor has reloaded, and the command (or a run's commit) is
 * planned again on the new state. Re-plans are bounded and back off through a
 * timer, so a writer that keeps losing yields to the event loop and ends with
 * `storage_failure` instead of spinning.
 *
 * @module
 */
import { FloretError } from "../../errors.ts";

/** Thrown when another writer changed the thread first; the actor has reloaded. */
export class StaleThreadError extends Error {
  /** The thread whose record moved. */
  readonly threadId: string;

  /** @param threadId the thread whose record moved */
  constructor(threadId: string) {
    super(`Thread changed concurrently: ${threadId}`);
    this.name = "StaleThreadError";
    this.threadId = threadId;
  }
}

/** How many times a write is planned again after losing a race (DESIGN §10: at most 8). */
export const MAX_STALE_REPLANS = 8;
/** The pause before the first re-plan; it doubles for each further one (1, 2, 4 … 128 ms). */
export const STALE_BACKOFF_MS = 1;

/**
 * Runs `attempt`, and again after each {@link StaleThreadError}, at most
 * {@link MAX_STALE_REPLANS} more times. Any other error passes through.
 *
 * @param attempt plans and commits; it must read the actor's state afresh each time
 * @returns what the successful attempt returned
 * @throws {FloretError} `storage_failure` when every re-plan lost its race
 */
export function retryStale<T>(attempt: () => Promise<T>): Promise<T> {
  // Not async: the first attempt (nearly always the only one, and every
  // commit of a run goes through here) costs one `catch`, not an async frame.
  let first: Promise<T>;
  try {
    first = attempt();
  } catch (error) {
    first = Promise.reject(error);
  }
  return first.catch((error: unknown) => replan(attempt, error));
}

/**
 * {@link retryStale} for an attempt that may finish at once: a plain value
 * (a commit that landed in its own tick) comes back as one settled promise,
 * with no `catch` registered on it; a promise is retried as there.
 *
 * @param attempt plans and commits; it must read the actor's state afresh each time
 * @returns what the successful attempt returned
 * @throws {FloretError} `storage_failure` when every re-plan lost its race
 */
export function retryStaleNow<T>(attempt: () => T | Promise<T>): Promise<T> {
  let first: T | Promise<T>;
  try {
    first = attempt();
  } catch (error) {
    return replan(attempt, error);
  }
  if (!(first instanceof Promise)) return Promise.resolve(first);
  return first.catch((error: unknown) => replan(attempt, error));
}

/** The attempts after a first one that threw `error`. */
async function replan<T>(attempt: () => T | Promise<T>, error: unknown): Promise<T> {
  for (let replans = 0;; replans++) {
    if (!(error instanceof StaleThreadError)) throw error;
    if (replans >= MAX_STALE_REPLANS) {
      throw new FloretError(
        "storage_failure",
        `Thread kept changing under this write, gave up after ${MAX_STALE_REPLANS} re-plans: ${error.threadId}`,
        { cause: error },
      );
    }
    // A timer, not a microtask: the writer that won gets to finish first.
    await new Promise((resolve) => setTimeout(resolve, STALE_BACKOFF_MS * 2 ** replans));
    try {
      return await attempt();
    } catch (next) {
      error = next;
    }
  }
}
