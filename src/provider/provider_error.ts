/**
 * The error gateways throw; the engine's retry policy reads `retry`.
 *
 * @module
 */

/** How the engine may recover from a provider failure. */
export type RetryAdvice = "retryable" | "timeout" | "never";

/** What kind of failure a provider reported. */
export type ProviderErrorKind =
  | "rate_limit"
  | "overloaded"
  | "server"
  | "auth"
  | "invalid_request"
  | "context_overflow"
  | "stream_interrupted"
  | "unknown";

/**
 * What a failed turn keeps of its provider failure (`failure.provider.evidence`),
 * stored with the turn's end so it survives the process.
 */
export interface ProviderFailureEvidence {
  /** The response body, at most 4 KiB of UTF-8, secrets redacted. */
  body?: string;
  /** The messages of the failure's causes, outermost first (each bounded, redacted). */
  causes?: string[];
  /** Which deadline ended the attempt, for a timeout. */
  timeoutStage?: "first_output" | "between_outputs" | "attempt";
}

/** Everything a {@link ProviderError} carries besides its message. */
export interface ProviderErrorInit {
  /** HTTP status, when there was a response. */
  status?: number;
  /** Whether a retry may help. */
  retry: RetryAdvice;
  /** The provider asked to wait this long before retrying. */
  retryAfterMs?: number;
  /** What kind of failure. */
  kind?: ProviderErrorKind;
  /** The provider's own error type or code (e.g. `invalid_api_key`). */
  providerCode?: string;
  /** The provider's request id, for support tickets. */
  requestId?: string;
  /** The response body as received, for diagnostics (never contains the API key). */
  body?: string;
  /** The underlying failure. */
  cause?: unknown;
  /** For a timeout the engine's clock raised: which deadline passed. */
  timeoutStage?: "first_output" | "between_outputs" | "attempt";
}

/**
 * Thrown by gateways. The engine retries `retryable` and `timeout` failures
 * within its policy and fails the turn with `provider_error` otherwise.
 *
 * @example
 * ```ts
 * import { ProviderError } from "@floret/engine";
 * throw new ProviderError("Rate limited", { status: 429, retry: "retryable", kind: "rate_limit" });
 * ```
 */
export class ProviderError extends Error {
  /** HTTP status, when there was a response. */
  readonly status?: number;
  /** Whether a retry may help. */
  readonly retry: RetryAdvice;
  /** The provider asked to wait this long before retrying. */
  readonly retryAfterMs?: number;
  /** What kind of failure. */
  readonly kind?: ProviderErrorKind;
  /** The provider's own error type or code. */
  readonly providerCode?: string;
  /** The provider's request id. */
  readonly requestId?: string;
  /** The response body as received. */
  readonly body?: string;
  /** For a timeout the engine's clock raised: which deadline passed. */
  readonly timeoutStage?: "first_output" | "between_outputs" | "attempt";

  /**
   * Makes a provider failure; gateways throw these.
   *
   * @param message what went wrong, for people
   * @param init status, retry advice and diagnostics
   */
  constructor(message: string, init: ProviderErrorInit) {
    super(message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = "ProviderError";
    this.status = init.status;
    this.retry = init.retry;
    this.retryAfterMs = init.retryAfterMs;
    this.kind = init.kind;
    this.providerCode = init.providerCode;
    this.requestId = init.requestId;
    this.body = init.body;
    if (init.timeoutStage !== undefined) this.timeoutStage = init.timeoutStage;
  }
}
