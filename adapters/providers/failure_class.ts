/**
 * Retry classification of provider failures: which ones a retry may fix.
 *
 * @module
 */
import type { ProviderErrorKind, RetryAdvice } from "../../src/provider/provider_error.ts";

/** What is known about one failure. */
export interface FailureFacts {
  /** HTTP status (or the numeric code of an in-stream error). */
  status?: number;
  /** The provider's error type, e.g. `overloaded_error`. */
  type?: string;
  /** The provider's error code, e.g. `context_length_exceeded`. */
  code?: string;
  /** The provider's message. */
  message?: string;
  /** The `x-should-retry` header, when sent. */
  shouldRetry?: string;
}

/** Retry advice and the kind of failure. */
export interface FailureAdvice {
  /** Whether a retry may help. */
  retry: RetryAdvice;
  /** What kind of failure. */
  kind: ProviderErrorKind;
}

// Context-window overflows look like ordinary 400s; only the wording tells.
const CONTEXT_OVERFLOW =
  /context[_ ]length|context window|maximum context|prompt is too long|too many (input )?tokens|input is too long|reduce the length/i;
// Quota and billing failures share 429 with rate limits, but waiting does not fix them.
const BILLING = /insufficient_quota|billing|spend_limit|credit balance/i;

/**
 * Classifies a failure. Rate limits, overload and server errors are
 * retryable; request timeouts are `timeout`; client errors, context
 * overflows, billing and anything unrecognised are `never`.
 *
 * @param facts what the provider said
 * @returns retry advice and kind
 */
export function classifyFailure(facts: FailureFacts): FailureAdvice {
  const { status, type = "", code = "", message = "" } = facts;
  const words = `${type} ${code}`;
  if (CONTEXT_OVERFLOW.test(words) || CONTEXT_OVERFLOW.test(message)) {
    return { retry: "never", kind: "context_overflow" };
  }
  if (BILLING.test(words)) return { retry: "never", kind: "rate_limit" };
  const advice = byStatusOrType(status, words);
  if (facts.shouldRetry === "false" && advice.retry !== "never") {
    return { retry: "never", kind: advice.kind };
  }
  return advice;
}

function byStatusOrType(status: number | undefined, words: string): FailureAdvice {
  if (status === 529 || /overloaded/i.test(words)) {
    return { retry: "retryable", kind: "overloaded" };
  }
  if (status === 429 || /rate_limit/i.test(words)) {
    return { retry: "retryable", kind: "rate_limit" };
  }
  if (status === 408 || /timeout/i.test(words)) return { retry: "timeout", kind: "server" };
  if (status === 409) return { retry: "retryable", kind: "server" };
  if (status !== undefined && status >= 500) return { retry: "retryable", kind: "server" };
  if (/server_error|api_error|internal/i.test(words)) return { retry: "retryable", kind: "server" };
  if (
    status === 401 || status === 402 || status === 403 || /authentication|permission/i.test(words)
  ) {
    return { retry: "never", kind: "auth" };
  }
  if (status !== undefined && status >= 400) return { retry: "never", kind: "invalid_request" };
  if (/invalid_request/i.test(words)) return { retry: "never", kind: "invalid_request" };
  return { retry: "never", kind: "unknown" };
}
