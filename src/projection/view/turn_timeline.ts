/**
 * Turn timing and final answers, derived from journal entries only, so they
 * read the same after a restart and in a fork: how long a turn took, how much
 * of it was spent waiting for the user (approvals and questions), and which
 * assistant items make its final answer.
 *
 * @module
 */
import type { Entry } from "../../journal/entries.ts";
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
  // Each map is made on first use, and a turn's part goes once its facts are
  // taken at its end (they are taken once): an idle thread keeps none of this.
  /** Assistant items of the turn's trailing steps without tool calls. */
  #finals: Map<string, string[]> | undefined;
  #openWaits: Map<string, { turnId: string; at: number }> | undefined;
  #waits: Map<string, [number, number][]> | undefined;

  /** Applies one committed entry. */
  apply(entry: Entry): void {
    // Only interaction entries open or close waits: the others (every step's) skip the list.
    const kind = entry.kind;
    if (kind === "interaction_opened" || kind === "interaction_resolved") this.#waitsOf(entry);
    if (kind !== "step") return;
    if (entry.calls.length > 0) {
      // Text before a tool call is an intermediate note, not the answer.
      this.#finals?.delete(entry.turnId);
    } else if (entry.text !== "" && !entry.partial) {
      const finals = this.#finals ??= new Map();
      const ids = finals.get(entry.turnId);
      const id = itemIds.assistant(entry.runId, entry.step);
      if (ids) ids.push(id);
      else finals.set(entry.turnId, [id]);
    }
  }

  /** Opens or closes the waits an interaction entry records. */
  #waitsOf(entry: Entry): void {
    for (const wait of waitEdges(entry)) {
      const at = Date.parse(entry.at);
      if (wait.edge === "open") {
        (this.#openWaits ??= new Map()).set(wait.key, { turnId: wait.turnId, at });
      } else this.#closeWait(wait.key, at);
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
    if (this.#openWaits) {
      for (const [key, wait] of this.#openWaits) {
        if (wait.turnId === turnId) this.#closeWait(key, end);
      }
    }
    const elapsedMs = Math.max(0, end - start);
    const waits = this.#waits?.get(turnId);
    const waitingMs = waits ? Math.min(elapsedMs, unionLength(waits, start, end)) : 0;
    // The turn's finals are handed over (nobody else holds the list), not copied.
    const finals = this.#finals?.get(turnId);
    this.#finals = forget(this.#finals, turnId);
    this.#waits = forget(this.#waits, turnId);
    return {
      elapsedMs,
      waitingMs,
      workMs: elapsedMs - waitingMs,
      finalItemIds: completed && finals ? finals : [],
    };
  }

  #closeWait(key: string, at: number): void {
    const open = this.#openWaits?.get(key);
    if (!open) return;
    this.#openWaits = forget(this.#openWaits, key);
    const waits = this.#waits ??= new Map();
    const intervals = waits.get(open.turnId);
    if (intervals) intervals.push([open.at, at]);
    else waits.set(open.turnId, [[open.at, at]]);
  }
}

/** `map` without `key`, or `undefined` once it is empty (its table goes with it). */
function forget<V>(map: Map<string, V> | undefined, key: string): Map<string, V> | undefined {
  if (!map?.delete(key)) return map;
  return map.size === 0 ? undefined : map;
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
