/**
 * The copy of a thread's view that hosts receive (`view()`, and the `view`
 * of every command's result), and the cached context figures it carries.
 * Hosts apply update batches to such a copy in place, so nothing in it is
 * shared with the actor's projections; its items and turns are copied at
 * once when they are short, and otherwise when first read, from a frozen
 * share of the projections' lists.
 *
 * @module
 */
import { publicGoal } from "../../tools/goal_state.ts";
import type { Agent } from "../../config/agent.ts";
import type { QueuedItem, ThreadRecord } from "../../journal/thread_record.ts";
import { type InteractionsReader, publicInteraction } from "../../projection/interactions.ts";
import type { ThreadProjections } from "../../projection/thread_projections.ts";
import { titleStateOf } from "../../projection/view/title_state.ts";
import type { ViewReader } from "../../projection/view/view_model.ts";
import type {
  QueuedInput,
  RunProgress,
  ThreadStatus,
  ThreadView,
} from "../../projection/view/view_types.ts";
import { copyShared, type SharedList } from "../../projection/cow_list.ts";
import { copyItem, copyTurnSummary } from "../../projection/view/item_copy.ts";

/** The context figures a view carries. */
export type ViewFigures = NonNullable<ThreadView["context"]>;

/** What a snapshot is made of; every part is read, none is kept. */
export interface SnapshotParts {
  record: ThreadRecord;
  status: ThreadStatus;
  view: ViewReader;
  interactions: InteractionsReader;
  viewVersion: number;
  runProgress?: RunProgress;
  context?: ViewFigures;
}

/**
 * A private, consistent copy of a thread's view.
 *
 * @param parts the thread's state at this instant
 * @returns a view the host may change freely
 */
export function viewSnapshot(parts: SnapshotParts): ThreadView {
  const { record, view: model } = parts;
  const { title, titleStatus, titleGeneration } = titleStateOf(record);
  const threadId = record.id;
  const status = parts.status;
  const pending = parts.interactions.pending().map(publicInteraction);
  const queue = record.queue.map(queuedView);
  const todos = model.todos.map((todo) => ({ ...todo }));
  const viewVersion = parts.viewVersion;
  // Two literals, not a spread of the title state: a spread inside a literal
  // copies through the runtime (about ten times the cost of this whole
  // literal), and every command's result carries a view. The keys keep the
  // spread's order: a present title after its generation.
  const view: ThreadView = title === undefined
    ? {
      threadId,
      titleStatus,
      titleGeneration,
      status,
      items: NOT_YET_COPIED,
      pending,
      queue,
      turns: NOT_YET_COPIED,
      todos,
      viewVersion,
    }
    : {
      threadId,
      titleStatus,
      titleGeneration,
      title,
      status,
      items: NOT_YET_COPIED,
      pending,
      queue,
      turns: NOT_YET_COPIED,
      todos,
      viewVersion,
    };
  if (record.restoredInputs?.length) view.restoredInputs = record.restoredInputs.map(queuedView);
  if (record.goal) view.goal = publicGoal(record.goal);
  if (record.stopRequest) {
    view.stopping = { mode: record.stopRequest.mode, requestedAt: record.stopRequest.requestedAt };
  }
  if (record.parentThreadId) view.parentThreadId = record.parentThreadId;
  if (record.tenant !== undefined) view.tenant = record.tenant;
  if (record.forkedFrom) view.forkedFrom = { ...record.forkedFrom };
  if (parts.runProgress) view.runProgress = { ...parts.runProgress };
  if (parts.context) view.context = parts.context;
  if (model.items.length < COPY_AT_ONCE_BELOW) view.items = model.items.map(copyItem);
  else copiedOnRead(view, "items", model.items.share(), copyItem);
  if (model.turns.length < COPY_AT_ONCE_BELOW) view.turns = model.turns.map(copyTurnSummary);
  else copiedOnRead(view, "turns", model.turns.share(), copyTurnSummary);
  return view;
}

/**
 * Lists shorter than this are copied at once: for a few dozen elements that
 * costs less than setting up a copy on first read (an accessor property per
 * list, which also moves the view object off V8's fast shapes).
 */
export const COPY_AT_ONCE_BELOW = 64;

// Stands in for a list until it is copied or `copiedOnRead` defines it; never seen by hosts.
const NOT_YET_COPIED: never[] = [];

/**
 * Makes `view[key]` the host's own copy of `shared`, built when the property
 * is first read (or never, when it is replaced first).
 *
 * Why: a command's result carries the whole view, and most callers read only
 * its status or last items, or nothing; copying tens of thousands of items and
 * turns for each command made every command on a long thread cost what a full
 * `view()` costs. `shared` is frozen at this instant (see `CowList.share`), so
 * the copy shows the view as it was when the command returned, however late it
 * is read. The property is an enumerable accessor until then, so JSON,
 * `structuredClone`, spreads and deep equality see a plain array; the first
 * read or write turns it into an ordinary data property.
 */
function copiedOnRead<K extends "items" | "turns">(
  view: ThreadView,
  key: K,
  shared: SharedList<ThreadView[K][number]>,
  copy: (value: ThreadView[K][number]) => ThreadView[K][number],
): void {
  let copied: ThreadView[K] | undefined;
  let source: SharedList<ThreadView[K][number]> | undefined = shared;
  Object.defineProperty(view, key, {
    enumerable: true,
    configurable: true,
    get(this: ThreadView): ThreadView[K] {
      const value = copied ?? copyShared(source!, copy) as ThreadView[K];
      source = undefined;
      // Settled, the view holds the copy itself. V8 keeps this accessor (and
      // so this closure) in a map of the old generation until a full GC, and a
      // closure still holding the copy keeps it alive through every scavenge:
      // on a long thread each read promoted the whole copy.
      copied = settle(this, key, value) ? undefined : value;
      return value;
    },
    set(this: ThreadView, value: ThreadView[K]): void {
      if (settle(this, key, value)) {
        source = undefined;
        copied = undefined;
      }
    },
  });
}

/**
 * Turns a copied-on-read list into a plain data property holding `value`;
 * false when the view is frozen (the accessor stays).
 * A module function, not a closure per snapshot: every command's view makes two.
 */
function settle<K extends "items" | "turns">(
  target: ThreadView,
  key: K,
  value: ThreadView[K],
): boolean {
  // A host may have frozen the view: then the accessor stays, serving one copy.
  if (Object.getOwnPropertyDescriptor(target, key)?.configurable) {
    Object.defineProperty(target, key, {
      value,
      writable: true,
      enumerable: true,
      configurable: true,
    });
    return true;
  }
  return false;
}

/**
 * A queued input as hosts see it.
 *
 * @param item the record's queue entry
 * @returns its id, request key and text
 */
export function queuedView(item: QueuedItem): QueuedInput {
  return { id: item.id, requestKey: item.requestKey, text: item.input.text };
}

/**
 * The context figures of a view, kept until the history moves. The estimate
 * projects the whole path (O(history)), so a view of an idle thread must not
 * pay it again: a commit bumps `lastSeq`, a reload replaces the projections,
 * and another agent counts differently; any of them computes anew.
 */
export class ViewContextCache {
  #kept:
    | { projections: ThreadProjections; lastSeq: number; agent: Agent; figures: ViewFigures }
    | undefined;

  /**
   * The figures for this state of the thread, computed only when it moved.
   *
   * @param projections the actor's current projections
   * @param lastSeq the last entry they include
   * @param agent the agent whose window and counter apply
   * @param compute the figures from scratch
   * @returns a copy the caller may hand to a host
   */
  figures(
    projections: ThreadProjections,
    lastSeq: number,
    agent: Agent,
    compute: () => ViewFigures,
  ): ViewFigures {
    const kept = this.#kept;
    if (kept?.projections === projections && kept.lastSeq === lastSeq && kept.agent === agent) {
      return copyFigures(kept.figures);
    }
    const figures = compute();
    this.#kept = { projections, lastSeq, agent, figures: copyFigures(figures) };
    return figures;
  }
}

// Hosts receive the figures inside views and may change them.
function copyFigures(figures: ViewFigures): ViewFigures {
  const copy = { ...figures };
  if (copy.confirmed) copy.confirmed = { ...copy.confirmed };
  return copy;
}
