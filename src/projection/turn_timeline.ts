/**
 * Turn timing and final answers, derived from journal entries only, so they
 * read the same after a restart and in a fork: how long a turn took, how much
 * of it was spent waiting for the user (approvals and questions), and which
 * assistant items make its final answer.
 *
 * @module
 */
import type { Entry } from "../journal/entries.ts";
import { itemIds } from "./item_ids.ts";

/** The timing and final answer of an ended turn. */
export interface TurnFacts {
  elapsedMs: number;
  waitingMs: number;
  workMs: number;
  finalItemIds: string[];
}

/** A user wait opening or closing, as an entry records it. */
export interface WaitEdge {
  turnId: string;
  /** What is waited for (an interaction id): one open edge, one close edge. */
  key: string;
  edge: "open" | "close";
}

/**
 * The user waits an entry opens or closes. Waits are interactions (approvals
 * and questions): an `interaction_opened` entry opens one and its
 * `interaction_resolved` entry (by `respond`, or cancelled with its turn)
 * closes it.
 */
export function waitEdges(entry: Entry): WaitEdge[] {
  const fact = entry as unknown as { kind: string; interactionId?: unknown; turnId: string };
  if (typeof fact.interactionId !== "string") return [];
  if (fact.kind === "interaction_opened") {
    return [{ turnId: fact.turnId, key: fact.interactionId, edge: "open" }];
  }
  if (fact.kind === "interaction_resolved") {
    return [{ turnId: fact.turnId, key: fact.interactionId, edge: "close" }];
  }
  return [];
}

/** Per-turn waits and final-answer candidates, folded from entries. */
export class TurnTimeline {
  /** Assistant items of the turn's trailing steps without tool calls. */
  readonly #finals = new Map<string, string[]>();
  readonly #openWaits = new Map<string, { turnId: string; at: number }>();
  readonly #waits = new Map<string, [number, number][]>();

  /** Applies one committed entry. */
  apply(entry: Entry): void {
    for (const wait of waitEdges(entry)) {
      const at = Date.parse(entry.at);
      if (wait.edge === "open") this.#openWaits.set(wait.key, { turnId: wait.turnId, at });
      else this.#closeWait(wait.key, at);
    }
    if (entry.kind === "turn_started") this.#finals.set(entry.turnId, []);
    if (entry.kind !== "step") return;
    if (entry.calls.length > 0) {
      // Text before a tool call is an intermediate note, not the answer.
      this.#finals.set(entry.turnId, []);
    } else if (entry.text !== "" && !entry.partial) {
      const finals = this.#finals.get(entry.turnId) ?? [];
      finals.push(itemIds.assistant(entry.runId, entry.step));
      this.#finals.set(entry.turnId, finals);
    }
  }

  /**
   * The facts of a turn that ended: a final answer only for a completed turn;
   * waits still open at its end count up to its end.
   *
   * @param start the turn's start, ms since the epoch (its `turn_started` time)
   * @param end its end, likewise (its `turn_ended` time)
   */
  facts(turnId: string, start: number, end: number, completed: boolean): TurnFacts {
    for (const [key, wait] of this.#openWaits) {
      if (wait.turnId === turnId) this.#closeWait(key, end);
    }
    const elapsedMs = Math.max(0, end - start);
    const waitingMs = Math.min(elapsedMs, unionLength(this.#waits.get(turnId) ?? [], start, end));
    return {
      elapsedMs,
      waitingMs,
      workMs: elapsedMs - waitingMs,
      finalItemIds: completed ? [...(this.#finals.get(turnId) ?? [])] : [],
    };
  }

  #closeWait(key: string, at: number): void {
    const open = this.#openWaits.get(key);
    if (!open) return;
    this.#openWaits.delete(key);
    const intervals = this.#waits.get(open.turnId) ?? [];
    intervals.push([open.at, at]);
    this.#waits.set(open.turnId, intervals);
  }
}

/** The length of the union of intervals, clipped to [start, end]. */
function unionLength(intervals: readonly [number, number][], start: number, end: number): number {
  const clipped = intervals
    .map(([from, to]) => [Math.max(from, start), Math.min(to, end)] as [number, number])
    .filter(([from, to]) => to > from)
    .sort((a, b) => a[0] - b[0]);
  let total = 0;
  let reach = -Infinity;
  for (const [from, to] of clipped) {
    if (to <= reach) continue;
    total += to - Math.max(from, reach);
    reach = to;
  }
  return total;
}
