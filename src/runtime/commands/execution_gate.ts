/**
 * Deferred execution: a host opened with `deferExecution: true` answers reads
 * and bookkeeping commands, but every command that would start a run answers
 * `execution_deferred` until `activate()` has settled what the previous
 * process left and opened the gate.
 *
 * @module
 */
import { FloretError } from "../../errors.ts";

/** Whether this host may start execution yet. */
export class ExecutionGate {
  #deferred: boolean;
  #activation: Promise<void> | undefined;

  /** @param deferred start closed (`deferExecution`) */
  constructor(deferred: boolean) {
    this.#deferred = deferred;
  }

  /** Execution is still deferred (before `activate()` has resolved). */
  get deferred(): boolean {
    return this.#deferred;
  }

  /** `activate()` has been called (it may still be running). */
  get activating(): boolean {
    return this.#activation !== undefined;
  }

  /**
   * Refuses a command that would start execution.
   *
   * @throws {FloretError} `execution_deferred` until activation
   */
  assertExecutable(what: string): void {
    if (this.#deferred) {
      throw new FloretError(
        "execution_deferred",
        `Execution is deferred until host.activate(): ${what}`,
      );
    }
  }

  /**
   * Opens the gate once `prepare` (startup recovery) has succeeded. Calls
   * share one activation; a failed one can be tried again.
   */
  activate(prepare: () => Promise<void>): Promise<void> {
    if (!this.#deferred) return Promise.resolve();
    this.#activation ??= prepare().then(
      () => {
        this.#deferred = false;
      },
      (error) => {
        this.#activation = undefined;
        throw error;
      },
    );
    return this.#activation;
  }
}
