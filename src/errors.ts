/**
 * The one error class of the engine, with stable codes hosts can branch on.
 *
 * @module
 */

/**
 * Stable codes carried by {@link FloretError}; hosts branch on these, never on messages.
 *
 * The last three come only from a remote service (`threadClient` of
 * `@floret/engine/http`): `forbidden` when the server's `authorize` refused the
 * request, `not_found` when the server has no such route (a wrong base URL), and
 * `internal` when the server failed in a way it does not describe, or the
 * client could not reach it or read its answer. An in-process service never
 * throws them.
 */
export type ErrorCode =
  | "invalid_input"
  | "request_conflict"
  | "thread_not_found"
  | "thread_busy"
  | "interaction_not_found"
  | "no_retry_target"
  | "host_closed"
  | "execution_deferred"
  | "store_too_new"
  | "storage_failure"
  | "timeout"
  | "forbidden"
  | "not_found"
  | "internal";

/** Why a turn failed; recorded on the turn, never thrown at the caller. */
export type TurnFailureCode =
  | "provider_error"
  | "interrupted"
  | "effect_outcome_unknown"
  | "tool_argument_correction_exhausted"
  | "context_budget_invalid"
  | "context_fixed_overhead"
  | "context_compaction_limit"
  | "max_steps"
  | "tool_repetition"
  | "model_context_unavailable"
  /** A request was larger than the agent's `maxRequestBytes`; it was not sent. */
  | "request_too_large"
  /** Host code or a gateway broke a contract inside a run, or the engine failed (DESIGN §10). */
  | "engine_contract"
  /** Stopped by `host.prepareRestore()` on a restored store; never retryable. */
  | "restored_turn";

/**
 * Every error the engine throws at a caller. `code` is stable; the message is
 * for people and may change. The original failure, if any, is kept in `cause`.
 *
 * @example
 * ```ts
 * import { FloretError } from "@floret/engine";
 * const error = new FloretError("invalid_input", "Request key is empty");
 * console.log(error.code); // "invalid_input"
 * ```
 */
export class FloretError extends Error {
  /** The stable code. */
  readonly code: ErrorCode;

  /**
   * Makes an error with a stable code.
   *
   * @param code the stable code
   * @param message a sentence-case message, details after a colon
   * @param options `cause`: the underlying failure
   */
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "FloretError";
    this.code = code;
  }
}

/**
 * Tells whether a value is a {@link FloretError}, optionally with a given code.
 *
 * @param error any thrown value
 * @param code when given, the code it must carry
 * @returns true when `error` is a FloretError (with that code)
 */
export function isFloretError(error: unknown, code?: ErrorCode): error is FloretError {
  return error instanceof FloretError && (code === undefined || error.code === code);
}
