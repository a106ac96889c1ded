/**
 * The lock that runs a thread's commands one at a time, in the order they
 * were asked for. It is on the path of every commit of every step, so it is
 * built from plain callbacks, and a command that finds it free starts at once.
 *
 * @module
 */

/** Runs commands one after another; see the module doc. */
export class CommandLock {
  #tail: Promise<unknown> = Promise.resolve();
  #queued = 0;
  /** Whether a command that took the lock at once is still in its synchronous part. */
  #holding = false;
  /** The gate commands asked for in that part wait for. */
  #held: { promise: Promise<void>; open: () => void } | undefined;
  readonly #stale: () => boolean;
  readonly #refresh: () => Promise<unknown>;

  /**
   * @param stale whether the guarded state must be read again before the next command
   * @param refresh reads it again (runs inside the lock, before that command)
   */
  constructor(stale: () => boolean, refresh: () => Promise<unknown>) {
    this.#stale = stale;
    this.#refresh = refresh;
    this.#release = () => {
      this.#queued--;
    };
  }

  /** Whether a command runs or waits. */
  get busy(): boolean {
    return this.#queued > 0;
  }

  /**
   * Runs `fn` after every earlier command has finished (after a refresh first,
   * when the state is stale).
   *
   * @param fn the command
   * @returns what it returns
   */
  run<T>(fn: () => T | Promise<T>): Promise<T> {
    if (this.#queued === 0 && !this.#stale()) return this.#runNow(fn);
    this.#queued++;
    if (this.#holding && !this.#held) {
      // Asked from inside the synchronous part of a command that took the lock
      // at once (its promise does not exist yet): wait for a gate it opens.
      let open!: () => void;
      const promise = new Promise<void>((resolve) => (open = resolve));
      this.#held = { promise, open };
      this.#tail = promise;
    }
    const result = this.#tail
      .then((): T | Promise<T> => this.#stale() ? this.#refresh().then(() => fn()) : fn())
      .finally(this.#release);
    this.#tail = result.then(noop, noop);
    return result;
  }

  /**
   * {@link run}, except that a command that finds the lock free and returns a
   * plain value (not a promise) — a commit to a synchronous store — lets the
   * lock go at once and its value comes back as it is: no promise is made for
   * it, and the caller goes on in the same tick. Anything else is what
   * {@link run} returns; a command that throws rejects, as there.
   *
   * @param fn the command
   * @returns its value when it finished at once, else a promise of it
   */
  runNow<T>(fn: () => T | Promise<T>): T | Promise<T> {
    if (this.#queued !== 0 || this.#stale()) return this.run(fn);
    this.#queued++;
    this.#holding = true;
    let result: T | Promise<T>;
    try {
      result = fn();
    } catch (error) {
      result = Promise.reject(error);
    } finally {
      this.#holding = false;
    }
    if (result instanceof Promise) return this.#holdUntil(result);
    this.#queued--;
    const held = this.#held;
    this.#held = undefined;
    // Commands asked for meanwhile wait behind the gate: it opens now, the command is over.
    held?.open();
    return result;
  }

  /**
   * {@link run} when nothing holds or waits for the lock (every earlier
   * command has finished): `fn` starts now instead of a tick later, and the
   * lock costs one promise instead of four.
   */
  #runNow<T>(fn: () => T | Promise<T>): Promise<T> {
    this.#queued++;
    this.#holding = true;
    let result: Promise<T>;
    try {
      result = Promise.resolve(fn());
    } catch (error) {
      result = Promise.reject(error);
    } finally {
      this.#holding = false;
    }
    return this.#holdUntil(result);
  }

  /** Keeps the lock, taken at once, until `result` settles. */
  #holdUntil<T>(result: Promise<T>): Promise<T> {
    // Registered before the caller can await `result`, so `busy` reads right
    // by the time the caller goes on, as with `finally` in `run`.
    const settled = result.then(this.#release, this.#release);
    const held = this.#held;
    this.#held = undefined;
    // Commands asked for meanwhile already queue behind the gate (and own the tail).
    if (held) void settled.then(held.open);
    else this.#tail = settled;
    return result;
  }

  // Made in the constructor, not as an arrow field: under tsx (esbuild
  // keepNames) an arrow field is wrapped to name it, for every thread's lock.
  readonly #release: () => void;
}

function noop(): void {}
