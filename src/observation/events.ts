/**
 * Observation events for logs and metrics. They carry ids, names, statuses,
 * counts and durations — never prompts, tool arguments, outputs, secrets or
 * API keys.
 *
 * @module
 */

/** One observation. `type` is e.g. `turn.started`, `provider.retry`, `tool.result`, `usage`. */
export interface ObservationEvent {
  type: string;
  threadId?: string;
  turnId?: string;
  runId?: string;
  /** ISO timestamp. */
  at: string;
  [detail: string]: unknown;
}

/**
 * Wraps a host's `onEvent` so a throwing or slow handler can never break a run.
 *
 * @param onEvent the host's handler
 * @returns a safe emitter
 */
export function safeObserver(
  onEvent: ((event: ObservationEvent) => void) | undefined,
): (event: ObservationEvent) => void {
  if (!onEvent) return () => {};
  return (event) => {
    try {
      onEvent(event);
    } catch {
      // Observation must never change what the engine does.
    }
  };
}
