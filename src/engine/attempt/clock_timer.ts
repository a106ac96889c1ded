/**
 * One timer for many deadline watchers (the attempts' clocks). It is armed
 * for the nearest deadline among the running clocks and kept while later
 * ones come and go, so a clock that starts and stops before its deadline —
 * nearly every provider attempt — adds to a set and removes from it, and
 * arms no timer of its own.
 *
 * While no clock runs, the pending timer must not keep the process alive:
 * where the runtime's timer handle can be unreferenced (Node, Bun) it is,
 * and referenced again by the next clock; elsewhere it is cleared.
 *
 * @module
 */

/** A watcher with its next deadline (ms since the epoch). */
export interface Clock {
  readonly due: number;
}

type TimerHandle = ReturnType<typeof setTimeout>;

/** A timer handle that can stop keeping the process alive (Node's `Timeout`, Bun's `Timer`). */
interface Unreferenced {
  ref(): unknown;
  unref(): unknown;
}

/** Runs `check` on each clock whose deadline has come, from one shared timer. */
export class ClockTimer<C extends Clock> {
  readonly #running = new Set<C>();
  readonly #check: (clock: C, now: number) => void;
  readonly #fire: () => void;
  #timer: TimerHandle | undefined;
  /** When `#timer` fires (Infinity while none is pending). */
  #timerDue = Infinity;
  #referenced = false;

  /**
   * @param check told when a clock's `due` has come; it times the clock out
   *   (and removes it) or moves its `due` on
   */
  constructor(check: (clock: C, now: number) => void) {
    this.#check = check;
    this.#fire = () => this.#fired();
  }

  /**
   * Starts watching a clock, at its current `due`.
   *
   * @param clock a clock not yet watched
   */
  add(clock: C): void {
    this.#running.add(clock);
    this.#schedule(clock.due);
  }

  /**
   * Stops watching a clock; with none left, the timer no longer holds the process.
   *
   * @param clock a watched clock
   */
  remove(clock: C): void {
    this.#running.delete(clock);
    if (this.#running.size > 0 || this.#timer === undefined) return;
    const handle = this.#timer as unknown as Partial<Unreferenced>;
    if (typeof handle.unref === "function") {
      handle.unref();
      this.#referenced = false;
    } else {
      clearTimeout(this.#timer);
      this.#timer = undefined;
      this.#timerDue = Infinity;
    }
  }

  /** Makes sure the timer fires by `due` and holds the process while clocks run. */
  #schedule(due: number): void {
    if (this.#timer !== undefined && this.#timerDue <= due) {
      if (!this.#referenced) {
        (this.#timer as unknown as Unreferenced).ref();
        this.#referenced = true;
      }
      return;
    }
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timerDue = due;
    this.#referenced = true;
    // Never past setTimeout's limit (it would fire at once, over and over): a
    // far deadline fires early, finds no clock due, and arms again.
    this.#timer = setTimeout(this.#fire, Math.min(2 ** 31 - 1, Math.max(0, due - Date.now())));
  }

  #fired(): void {
    this.#timer = undefined;
    this.#timerDue = Infinity;
    const now = Date.now();
    let failure: { error: unknown } | undefined;
    // A copy: a check removes its clock when it times out.
    for (const clock of [...this.#running]) {
      if (clock.due > now || !this.#running.has(clock)) continue;
      try {
        this.#check(clock, now);
      } catch (error) {
        failure ??= { error };
      }
    }
    let next = Infinity;
    for (const clock of this.#running) if (clock.due < next) next = clock.due;
    if (next !== Infinity) this.#schedule(next);
    // Every due clock was checked; the first failure surfaces as a timer callback's would.
    if (failure) throw failure.error;
  }
}
