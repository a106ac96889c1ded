/**
 * The `usage` observation of a step: told after the step's commit (a usage
 * an observer hears of is in the journal), with the thread's totals so a
 * meter needs no view of its own.
 *
 * @module
 */
import type { Usage } from "../../provider/gateway.ts";

/** The fields a usage has, in the order they are summed. */
const FIELDS = [
  "inputTokens",
  "outputTokens",
  "cacheReadTokens",
  "cacheWriteTokens",
  "reasoningTokens",
] as const;

/**
 * Sums usages field by field; a field no usage has stays absent.
 *
 * @param usages the usages to add, e.g. every turn's
 * @returns their sum
 */
export function sumUsage(usages: Iterable<Usage | undefined>): Usage {
  const sum: Usage = {};
  for (const usage of usages) {
    if (!usage) continue;
    for (const field of FIELDS) {
      const value = usage[field];
      if (typeof value === "number") sum[field] = (sum[field] ?? 0) + value;
    }
  }
  return sum;
}

/** What the run loop tells once a step with usage committed. */
export interface UsageReport {
  step: number;
  usage: Usage;
  estimateTokens: number;
  windowTokens: number | undefined;
}

/** The observer side the report needs. */
export interface UsageObserver {
  readonly observing: boolean;
  observe(type: string, detail: Record<string, unknown>): void;
  /** The usage of every turn of the thread, this step's included (absent on hand-made hosts). */
  threadUsage?(): Usage | undefined;
}

/**
 * Tells observers of a committed step's usage.
 *
 * @param host the run's host
 * @param report the step's figures
 */
export function observeUsage(host: UsageObserver, report: UsageReport): void {
  if (!host.observing) return;
  const detail: Record<string, unknown> = {
    step: report.step,
    usage: report.usage,
    estimateTokens: report.estimateTokens,
    windowTokens: report.windowTokens,
  };
  const totals = host.threadUsage?.();
  if (totals) detail.threadUsage = totals;
  host.observe("usage", detail);
}
