/**
 * Provider recovery and request timeout policies (DESIGN.md §7).
 *
 * @module
 */
import { FloretError } from "../errors.ts";

/** How the engine retries failed provider attempts. */
export interface ProviderRetryPolicy {
  /** No retries at all. */
  disabled?: boolean | undefined;
  /** Backoff before extra attempt 1, 2, 3, 4 (±20 % jitter on top). Default [2000, 4000, 8000, 10000]. */
  delaysMs?: number[] | undefined;
  /** At most this many extra attempts after timeouts. Default 3. */
  maxTimeoutRetries?: number | undefined;
  /** No retry starts later than this after the first failure. Default 300000. */
  windowMs?: number | undefined;
}

/** Per-attempt request timeouts. */
export interface ProviderTimeouts {
  /** Until the first event. Default 5 min. */
  firstOutputMs?: number | undefined;
  /** Between two events. Default 2 min. */
  betweenOutputsMs?: number | undefined;
  /** For a whole attempt. Default 15 min. */
  attemptMs?: number | undefined;
}

/** A policy with every default filled in (`Agent.retry`). */
export interface ResolvedRetryPolicy {
  /** Backoff before each extra attempt; empty when retries are disabled. */
  delaysMs: readonly number[];
  /** Extra attempts allowed after timeouts. */
  maxTimeoutRetries: number;
  /** No retry starts later than this after the first failure. */
  windowMs: number;
  /** Per-attempt request timeouts. */
  timeouts: Required<ProviderTimeouts>;
}

/** The default backoff before each extra attempt. */
export const DEFAULT_RETRY_DELAYS_MS: readonly number[] = [2000, 4000, 8000, 10000];

/**
 * Fills defaults and validates a retry policy.
 *
 * @param policy the agent's policy
 * @param timeouts the agent's timeouts
 * @returns the resolved policy
 * @throws {FloretError} `invalid_input` for negative or non-finite numbers
 */
export function resolveRetryPolicy(
  policy: ProviderRetryPolicy | undefined,
  timeouts: ProviderTimeouts | undefined,
): ResolvedRetryPolicy {
  const delays = policy?.disabled ? [] : (policy?.delaysMs ?? DEFAULT_RETRY_DELAYS_MS);
  const numbers = [
    ...delays,
    policy?.maxTimeoutRetries ?? 0,
    policy?.windowMs ?? 0,
    timeouts?.firstOutputMs ?? 0,
    timeouts?.betweenOutputsMs ?? 0,
    timeouts?.attemptMs ?? 0,
  ];
  if (numbers.some((n) => typeof n !== "number" || !Number.isFinite(n) || n < 0)) {
    throw new FloretError(
      "invalid_input",
      "Retry policy and timeouts need finite, non-negative numbers",
    );
  }
  return {
    delaysMs: [...delays],
    maxTimeoutRetries: policy?.maxTimeoutRetries ?? 3,
    windowMs: policy?.windowMs ?? 300_000,
    timeouts: {
      firstOutputMs: timeouts?.firstOutputMs ?? 300_000,
      betweenOutputsMs: timeouts?.betweenOutputsMs ?? 120_000,
      attemptMs: timeouts?.attemptMs ?? 900_000,
    },
  };
}
