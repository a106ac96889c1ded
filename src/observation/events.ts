/**
 * Observation events for logs and metrics. They carry ids, names, statuses,
 * counts and durations — never prompts, tool arguments, outputs, secrets or
 * API keys.
 *
 * @module
 */
import type { TurnFailureCode } from "../errors.ts";
import type { Usage } from "../provider/gateway.ts";
import type { ProviderErrorKind, RetryAdvice } from "../provider/provider_error.ts";
import type { ToolEffect } from "../tools/define_tool.ts";

/** How a turn ended. */
export type ObservedOutcome = "completed" | "failed" | "cancelled" | "interrupted";

/** How a tool call ended, as `tool.result` reports it. */
export type ObservedToolStatus =
  | "completed"
  | "error"
  | "uncertain"
  | "denied"
  | "cancelled"
  | "unknown";

/**
 * The details of each observation, by its `type`. Type literals (not
 * interfaces), so every event stays assignable to a plain record of fields.
 */
export type ObservationDetails = {
  /** A host opened with `activation: "deferred"` was activated. */
  "host.activated": Record<never, never>;
  /** `prepareRestore` finished: what it stopped, released and moved. */
  "host.restore_prepared": {
    stoppedTurns: number;
    releasedInteractions: number;
    restoredInputs: number;
  };
  /** A turn (or a retry of one) started running on this host. */
  "turn.started": Record<never, never>;
  /** The turn waits for people (approvals or answers). */
  "turn.waiting": Record<never, never>;
  /** A turn ended; `failureCode` when it failed. */
  "turn.ended": { outcome: ObservedOutcome; failureCode?: TurnFailureCode | undefined };
  /** A turn a crashed host left running was settled by this one. */
  "turn.recovered": { outcome?: ObservedOutcome | undefined };
  /** A run stopped on an engine fault (the turn settles when the store answers). */
  "run.failed": { message: string };
  /** Queued input could not be handed to the next turn. */
  "queue.handover_failed": { message: string };
  /** A generated title was installed. */
  "title.ready": { generation: number };
  /** A generated title arrived too late (the title changed meanwhile). */
  "title.dropped": { generation: number };
  /** Title generation failed; the fallback title stays. */
  "title.failed": { generation: number; message?: string | undefined };
  /** An approval or question opened. */
  "interaction.opened": {
    interactionId: string;
    kind: "approval" | "input";
    callId?: string | undefined;
    toolName?: string | undefined;
  };
  /** An approval or question was answered (counts only, never values). */
  "interaction.resolved": {
    interactionId: string;
    kind: "approval" | "input";
    decision?: "approve" | "deny" | undefined;
    answered?: number | undefined;
  };
  /** A sub-agent thread was made. */
  "subagent.spawned": { childThreadId: string; agentId: string };
  /** A tool call started. */
  "tool.dispatched": { callId: string; name: string; effect: ToolEffect };
  /** A tool call ended. */
  "tool.result": { callId: string; name: string; status: ObservedToolStatus; durationMs: number };
  /** A tool's `activity` was refused (the result itself was kept). */
  "tool.activity_rejected": { callId: string; problem: string };
  /** A compaction operation settled. */
  "compaction": {
    operationId: string;
    status: "compacted" | "noop" | "failed";
    trigger: "threshold" | "overflow" | "manual";
    tokensBefore?: number | undefined;
    tokensAfter?: number | undefined;
    reason?: string | undefined;
  };
  /** A summary request of a compaction was sent. */
  "compaction.attempt": { operationId: string; batch: number; attempt: number };
  /** A summary request failed and is retried after `delayMs`. */
  "compaction.retry": {
    operationId: string;
    attempt: number;
    delayMs: number;
    kind?: ProviderErrorKind | undefined;
    status?: number | undefined;
  };
  /** A model request was sent (attempt 1, or a retry). */
  "provider.attempt": { step: number; attempt: number; fingerprint: string };
  /** A model request failed and is retried after `delayMs`. */
  "provider.retry": {
    step: number;
    attempt: number;
    delayMs: number;
    status?: number | undefined;
    kind?: ProviderErrorKind | undefined;
    retry: RetryAdvice;
    /** The provider's message, at most 500 characters, secrets redacted. */
    message: string;
  };
  /** The provider's usage of one step, with the context figures after it. */
  "usage": {
    step: number;
    usage: Usage;
    estimateTokens: number;
    windowTokens: number;
  };
};

/** Every observation type the engine emits. */
export type ObservationType = keyof ObservationDetails;

/** Where an observation happened; `at` is an ISO timestamp. */
export type ObservationContext = {
  threadId?: string | undefined;
  turnId?: string | undefined;
  runId?: string | undefined;
  /** The run's labels (`send({ labels })`), on the events of a run that has any. */
  labels?: Readonly<Record<string, string>> | undefined;
  /** ISO timestamp. */
  at: string;
};

/** The observation of one type: its `type`, where it happened, and its details. */
export type ObservationOf<K extends ObservationType> =
  & { type: K }
  & ObservationContext
  & ObservationDetails[K];

/**
 * One observation, discriminated by `type` (e.g. `turn.started`,
 * `provider.retry`, `tool.result`, `usage`): after
 * `event.type === "tool.result"`, `event.status` and `event.durationMs` are typed.
 */
export type ObservationEvent = { [K in ObservationType]: ObservationOf<K> }[ObservationType];

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
