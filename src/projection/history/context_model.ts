/**
 * Context accounting folded from journal entries: one record per compaction
 * operation, the latest usage a provider confirmed, and disjoint usage totals
 * over every committed step and summary request.
 *
 * @module
 */
import type { CompactionEntry, CompactionStartedEntry, Entry } from "../../journal/entries.ts";
import type { Usage } from "../../provider/gateway.ts";
import type { CompactionRecord, UsageTotals } from "../view/view_types.ts";

export type { CompactionRecord, UsageTotals } from "../view/view_types.ts";

/**
 * The record of a compaction entry, committed or not: figures only, never
 * summary text. Its observation event carries the same fields.
 */
export function recordOf(entry: Omit<CompactionEntry, "seq" | "at">): CompactionRecord {
  const record: CompactionRecord = {
    operationId: entry.operationId,
    status: entry.status,
    trigger: entry.trigger,
    tokensBefore: entry.tokensBefore,
  };
  if (entry.tokensAfter !== undefined) record.tokensAfter = entry.tokensAfter;
  if (entry.reason !== undefined) record.reason = entry.reason;
  return record;
}

/** What readers of the context accounting need. */
export type ContextReader = Pick<
  ContextModel,
  "records" | "record" | "confirmed" | "totals" | "recordOfTurn" | "unfinished"
>;

/** Compaction records and usage of one thread's path. */
export class ContextModel {
  readonly #records: CompactionRecord[] = [];
  // The maps are made at the first compaction: most threads never compact, and
  // an idle cached actor should not keep three empty maps for it.
  #byTurn: Map<string, CompactionRecord> | undefined;
  #byOperation: Map<string, CompactionRecord> | undefined;
  /** Operations started and not yet recorded, by operation id. */
  #open: Map<string, CompactionStartedEntry> | undefined;
  readonly #totals: UsageTotals = {
    inputTokens: 0,
    outputTokens: 0,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
  };
  #confirmed: Usage | undefined;

  /** Applies one committed entry. */
  apply(entry: Entry): void {
    if (entry.kind === "step" && entry.usage) {
      // A step made with supplemental context measured a request that is not stored.
      if (!entry.unconfirmed) this.#confirmed = entry.usage;
      this.#add(entry.usage);
    } else if (entry.kind === "compaction_started") {
      (this.#open ??= new Map()).set(entry.operationId, entry);
    } else if (entry.kind === "compaction") {
      this.#open?.delete(entry.operationId);
      // What was confirmed measured the history before the cut.
      if (entry.status === "compacted") this.#confirmed = undefined;
      const record = recordOf(entry);
      this.#records.push(record);
      // Only records written by a run: a below-target no-op carries the thread's last
      // turn id for ordering, and must not shadow what a compaction turn recorded.
      if (entry.runId !== undefined) (this.#byTurn ??= new Map()).set(entry.turnId, record);
      (this.#byOperation ??= new Map()).set(entry.operationId, record);
      if (entry.usage) this.#add(entry.usage);
    }
  }

  /** Every compaction operation, in operation order (copies). */
  records(): CompactionRecord[] {
    return this.#records.map((record) => ({ ...record }));
  }

  /** The latest record a run of this turn wrote (a compaction turn's outcome), a copy. */
  recordOfTurn(turnId: string): CompactionRecord | undefined {
    const record = this.#byTurn?.get(turnId);
    return record && { ...record };
  }

  /** The record of one operation, a copy. */
  record(operationId: string): CompactionRecord | undefined {
    const record = this.#byOperation?.get(operationId);
    return record && { ...record };
  }

  /** Operations of this turn that were started and have no record yet, in start order. */
  unfinished(turnId: string): CompactionStartedEntry[] {
    if (!this.#open) return [];
    return [...this.#open.values()].filter((entry) => entry.turnId === turnId);
  }

  /** The latest usage a provider reported for a step. */
  confirmed(): Usage | undefined {
    return this.#confirmed && { ...this.#confirmed };
  }

  /** Usage over every committed step and summary request. */
  totals(): UsageTotals {
    return { ...this.#totals };
  }

  #add(usage: Usage): void {
    this.#totals.inputTokens += usage.inputTokens ?? 0;
    this.#totals.outputTokens += usage.outputTokens ?? 0;
    this.#totals.cacheReadTokens += usage.cacheReadTokens ?? 0;
    this.#totals.cacheWriteTokens += usage.cacheWriteTokens ?? 0;
  }
}
