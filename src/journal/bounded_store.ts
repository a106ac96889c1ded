/**
 * Store calls with a deadline. A store whose call never answers (a hung
 * connection, a lost lock) would hang every command awaiting it; bounded,
 * the call rejects `storage_failure` once `timeoutMs` passed. The store may
 * still answer later: a commit that lands after its deadline is what any
 * failed commit of unknown outcome is, and the thread settles once the
 * store answers again (see runtime/turns/store_probe.ts).
 *
 * One watchdog timer serves every call in flight, armed only while some
 * call is pending, so a call costs a set entry rather than a timer of its own.
 *
 * @module
 */
import { FloretError } from "../errors.ts";
import type { KvStore } from "../spi/kv_store.ts";

/** The default deadline of one store call (`openHost({ storeTimeoutMs })`). */
export const DEFAULT_STORE_TIMEOUT_MS = 30_000;

interface Pending {
  deadline: number;
  what: string;
  reject(error: FloretError): void;
}

/** Rejects each pending call whose deadline passed; one timer for all of them. */
class Watchdog {
  readonly #pending = new Set<Pending>();
  readonly #timeoutMs: number;
  #timer: ReturnType<typeof setTimeout> | undefined;

  constructor(timeoutMs: number) {
    this.#timeoutMs = timeoutMs;
  }

  /** Races `call` against the deadline. */
  bound<T>(what: string, call: () => Promise<T>): Promise<T> {
    let promise: Promise<T>;
    try {
      promise = call();
    } catch (error) {
      return Promise.reject(error);
    }
    return new Promise<T>((resolve, reject) => {
      const entry: Pending = { deadline: Date.now() + this.#timeoutMs, what, reject };
      this.#pending.add(entry);
      this.#arm();
      Promise.resolve(promise).then(
        (value) => {
          this.#pending.delete(entry);
          resolve(value);
        },
        (error) => {
          this.#pending.delete(entry);
          reject(error);
        },
      );
    });
  }

  #arm(): void {
    if (this.#timer !== undefined) return;
    // A quarter of the deadline (at most a second) between checks: a call fails
    // at most that much after its deadline, and an idle host arms no timer at all.
    const every = Math.max(1, Math.min(1_000, Math.floor(this.#timeoutMs / 4)));
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#check();
      if (this.#pending.size > 0) this.#arm();
    }, every);
  }

  #check(): void {
    const now = Date.now();
    for (const entry of this.#pending) {
      if (entry.deadline > now) continue;
      this.#pending.delete(entry);
      entry.reject(
        new FloretError(
          "storage_failure",
          `The store did not answer ${entry.what} within ${this.#timeoutMs} ms`,
        ),
      );
    }
  }
}

/**
 * The store with every call bounded by `timeoutMs`. Properties other than
 * its four calls (a store's internal fast paths) are read from the store
 * itself by the journal, not through this wrapper.
 *
 * @param store the store
 * @param timeoutMs the deadline of each call
 * @returns a store whose calls reject `storage_failure` past the deadline
 */
export function boundedStore(store: KvStore, timeoutMs: number): KvStore {
  const watchdog = new Watchdog(timeoutMs);
  return {
    getMany: (keys) => watchdog.bound("a read", () => store.getMany(keys)),
    list: (selector, options) => watchdog.bound("a list", () => store.list(selector, options)),
    commit: (op) => watchdog.bound("a commit", () => store.commit(op)),
    close: () => watchdog.bound("close", () => store.close()),
  };
}
