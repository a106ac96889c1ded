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
