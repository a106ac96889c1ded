/**
 * The memory-only handle of a run executing in this process.
 *
 * @module
 */
import type { Agent } from "../config/agent.ts";

/** A run in progress: its ids, its abort switches and what it has streamed. */
export interface ActiveRun {
  turnId: string;
  runId: string;
  agent: Agent;
  /** Aborts the provider request (immediate and graceful cancel). */
  providerAbort: AbortController;
  /** Aborts tool handlers (immediate cancel, shutdown, delete). */
  toolAbort: AbortController;
  /** A cancel asked the run to stop after the current batch. */
  stopRequested: boolean;
  /** Settles when the run has returned. */
  done: Promise<void>;
  /** Settles when the tool batch in flight (if any) has committed its results. */
  batch: Promise<void> | undefined;
  /** Output streamed by the step in flight, kept so a cancel can show it. */
  partial: { step: number; text: string; reasoning: string } | undefined;
}

/**
 * Tells a run to stop: it returns at its next check and commits nothing more
 * once its turn is no longer active. `provider` leaves running tools alone
 * (graceful cancel lets them finish).
 */
export function stopRun(run: ActiveRun, why: string, scope: "provider" | "all" = "all"): void {
  run.stopRequested = true;
  const reason = new DOMException(why, "AbortError");
  run.providerAbort.abort(reason);
  if (scope === "all") run.toolAbort.abort(reason);
}
