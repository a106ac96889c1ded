/**
 * The turn summaries of a thread's view: one per turn, in start order, with
 * its outcome, timings, usage and failure once known. Kept beside the items
 * (view_model.ts) because turns change on other entries than items do, and
 * their shapes are tuned for the views' copies (turn_shape.ts).
 *
 * @module
 */
import type { Usage } from "../../provider/gateway.ts";
import type { TurnSummary } from "./view_types.ts";
import type { Entry, TurnEndedEntry, TurnStartedEntry } from "../../journal/entries.ts";
import type { OpSink } from "./op_sink.ts";
import { TurnTimeline } from "./turn_timeline.ts";
import { copyTurn } from "./turn_shape.ts";
import { CowList } from "../cow_list.ts";
import { appended } from "../appended.ts";

/** A view's turn summaries, folded from entries; every change reported to the sink. */
export class TurnList {
  /** Never changed in place: an element is replaced, so shared copies stay as they were. */
  readonly list: CowList<TurnSummary> = new CowList();
  readonly #index = new Map<string, number>();
  // The seq of each turn's terminal entry, by its place in `list` (-1 while it runs).
  #endSeqs: number[] = [];
  readonly #timeline = new TurnTimeline();
  readonly #sink: OpSink;

  /** @param sink receives a `turns` component op at every change */
  constructor(sink: OpSink) {
    this.#sink = sink;
  }

  /** Sees every entry, for the turns' waiting and working time. */
  observe(entry: Entry): void {
    this.#timeline.apply(entry);
  }

  /** A turn started: its summary is added, running. */
  started(entry: TurnStartedEntry): void {
    const summary: TurnSummary = { turnId: entry.turnId, startedAt: entry.at, finalItemIds: [] };
    if (entry.retryOf) summary.retryOf = { ...entry.retryOf };
    this.#index.set(entry.turnId, this.list.length);
    this.#endSeqs = appended(this.#endSeqs, -1);
    this.list.push(summary);
    this.#emit();
  }

  /** The seq of a turn's terminal entry, when it has ended. */
  endSeq(turnId: string): number | undefined {
    const index = this.#index.get(turnId);
    const seq = index === undefined ? -1 : this.#endSeqs[index];
    return seq < 0 ? undefined : seq;
  }

  /**
   * A turn ended: its summary gets outcome, timings and failure. The key order
   * built here is the one `copyTurn` (turn_shape.ts) reproduces by a literal for
   * the common shape: change both together.
   */
  ended(entry: TurnEndedEntry): void {
    const index = this.#index.get(entry.turnId);
    if (index === undefined) return;
    const open = this.list.at(index)!;
    const start = Date.parse(open.startedAt);
    const end = Date.parse(entry.at);
    const facts = this.#timeline.facts(entry.turnId, start, end, entry.outcome === "completed");
    if (
      open.outcome === undefined && open.usage !== undefined && open.retryOf === undefined &&
      !entry.failure
    ) {
      // The common end (first, after a step with usage, not a retry, no failure): built
      // directly as the literal `copyTurn` would rebuild (same keys, same order), without
      // the spread and the fields added one by one below.
      this.list.set(index, {
        turnId: open.turnId,
        startedAt: open.startedAt,
        finalItemIds: facts.finalItemIds,
        usage: open.usage,
        outcome: entry.outcome,
        endedAt: entry.at,
        durationMs: end - start,
        elapsedMs: facts.elapsedMs,
        waitingMs: facts.waitingMs,
        workMs: facts.workMs,
      });
    } else {
      const turn = { ...open, outcome: entry.outcome, endedAt: entry.at };
      turn.durationMs = end - start;
      Object.assign(turn, facts);
      if (entry.failure) turn.failure = { ...entry.failure };
      // Rebuilt by a literal (in the common shape), so ended turns share one
      // object shape and the views' copy of all turns stays on V8's fast path.
      this.list.set(index, copyTurn(turn));
    }
    this.#endSeqs[index] = entry.seq;
    this.#emit();
  }

  /** Adds a step's usage to its turn's sum. */
  addUsage(turnId: string, usage: Usage | undefined): void {
    const index = this.#index.get(turnId);
    if (!usage || index === undefined) return;
    const turn = this.list.at(index)!;
    const sum: Usage = { ...turn.usage };
    // Once per step: `for…in` allocates no entry arrays, unlike `Object.entries`.
    for (const key in usage) {
      const field = key as keyof Usage;
      const value = usage[field];
      if (typeof value === "number") sum[field] = (sum[field] ?? 0) + value;
    }
    // A running turn (no outcome yet) that is no retry holds these keys, in this
    // order (see started): the literal is the spread's result, built faster.
    this.list.set(
      index,
      turn.outcome === undefined && turn.retryOf === undefined
        ? {
          turnId: turn.turnId,
          startedAt: turn.startedAt,
          finalItemIds: turn.finalItemIds,
          usage: sum,
        }
        : { ...turn, usage: sum },
    );
  }

  #emit(): void {
    if (this.#sink.hasSubscribers) {
      this.#sink.push({ op: "component", name: "turns", value: this.list.slice() });
    } else this.#sink.touch();
  }
}
