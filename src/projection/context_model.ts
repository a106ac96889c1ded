/**
 * Context accounting folded from journal entries: one record per compaction
 * operation, the latest usage a provider confirmed, and disjoint usage totals
 * over every committed step and summary request.
 *
 * @module
 */
import type { Entry } from "../journal/entries.ts";
import type { Usage } from "../provider/gateway.ts";

/** One compaction operation as `context().compactions` lists it. */
export interface CompactionRecord {
  operationId: string;
  status: "compacted" | "noop" | "failed";
  tokensBefore?: number;
  tokensAfter?: number;
}

/** Usage summed by kind; the four counts are disjoint. */
export interface UsageTotals {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
}

/** What readers of the context accounting need. */
export type ContextReader = Pick<ContextModel, "records" | "confirmed" | "totals" | "recordOfTurn">;

/** Compaction records and usage of one thread's path. */
export class ContextModel {
  readonly #records: CompactionRecord[] = [];
  readonly #byTurn = new Map<string, CompactionRecord>();
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
      this.#confirmed = entry.usage;
      this.#add(entry.usage);
    } else if (entry.kind === "compaction") {
      const record: CompactionRecord = {
        operationId: entry.operationId,
        status: entry.status,
        tokensBefore: entry.tokensBefore,
      };
      if (entry.tokensAfter !== undefined) record.tokensAfter = entry.tokensAfter;
      this.#records.push(record);
      this.#byTurn.set(entry.turnId, record);
      if (entry.usage) this.#add(entry.usage);
    }
  }

  /** Every compaction operation, in operation order (copies). */
  records(): CompactionRecord[] {
    return this.#records.map((record) => ({ ...record }));
  }

  /** The latest compaction record of a turn (a manual compaction's outcome). */
  recordOfTurn(turnId: string): CompactionRecord | undefined {
    return this.#byTurn.get(turnId);
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
