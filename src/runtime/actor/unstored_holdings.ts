/**
 * What one process holds for a thread that never reaches the store, by
 * design, and so is lost with the process: the supplemental context of queued
 * sends (DESIGN: it never reaches the store) and secret answers given while
 * no run of their turn was alive (they go only to the run `respond` resumes).
 *
 * @module
 */
import type { SupplementalContext } from "../../journal/entries.ts";
import type { ProviderMessage } from "../../provider/gateway.ts";
import type { ActiveRun } from "./active_run.ts";

/** A thread's memory-only holdings; one per thread actor. */
export class UnstoredHoldings {
  // Made on first use: nearly every thread holds nothing, and a cached idle
  // actor should not keep two empty maps for it.
  // By queue id.
  #supplemental: Map<string, SupplementalContext[]> | undefined;
  // By interaction id.
  #secrets:
    | Map<string, { turnId: string; message: ProviderMessage; values: readonly string[] }>
    | undefined;

  /** Holds nothing: dropping the actor loses nothing. */
  get empty(): boolean {
    return !this.#supplemental?.size && !this.#secrets?.size;
  }

  /** Keeps a queued send's supplemental context until its turn starts. */
  holdSupplemental(queueId: string, context: SupplementalContext[]): void {
    (this.#supplemental ??= new Map()).set(queueId, context);
  }

  /** The supplemental context held for a queued input, if this process has it. */
  supplemental(queueId: string): SupplementalContext[] | undefined {
    return this.#supplemental?.get(queueId);
  }

  /** Forgets a queued input's supplemental context (its turn started, or it was deleted). */
  dropSupplemental(queueId: string): void {
    if (this.#supplemental?.delete(queueId) && this.#supplemental.size === 0) {
      this.#supplemental = undefined;
    }
  }

  /** Keeps a secret-bearing answers message until a run of its turn starts here. */
  holdSecret(
    turnId: string,
    interactionId: string,
    message: ProviderMessage,
    values: readonly string[],
  ): void {
    (this.#secrets ??= new Map()).set(interactionId, { turnId, message, values });
  }

  /** Whether this process holds the secret answers of `interactionId` for a next run. */
  holdsSecret(interactionId: string): boolean {
    return this.#secrets?.has(interactionId) ?? false;
  }

  /** Hands the held secrets of `run`'s turn to it; other turns' secrets are dropped. */
  handSecretsTo(run: ActiveRun): void {
    if (!this.#secrets) return;
    for (const [interactionId, held] of this.#secrets) {
      if (held.turnId === run.turnId) run.addSecret(interactionId, held.message, held.values);
    }
    this.#secrets = undefined;
  }
}
