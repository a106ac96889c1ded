/**
 * The copy of a thread's view that hosts receive (`view()`, and the `view`
 * of every command's result), and the cached context figures it carries.
 * Hosts apply update batches to such a copy in place, so nothing in it is
 * shared with the actor's projections.
 *
 * @module
 */
import type { Agent } from "../config/agent.ts";
import type { QueuedItem, ThreadRecord } from "../journal/thread_record.ts";
import { type InteractionsReader, publicInteraction } from "../projection/interactions.ts";
import type { ThreadProjections } from "../projection/thread_projections.ts";
import { titleStateOf } from "../projection/title_state.ts";
import type { ViewReader } from "../projection/view_model.ts";
import type {
  QueuedInput,
  RunProgress,
  ThreadStatus,
  ThreadView,
} from "../projection/view_types.ts";

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
  const view: ThreadView = {
    threadId: record.id,
    ...titleStateOf(record),
    status: parts.status,
    items: model.items.map((item) => ({ ...item })),
    pending: parts.interactions.pending().map(publicInteraction),
    queue: record.queue.map(queuedView),
    turns: model.turns.map((turn) => ({ ...turn })),
    todos: model.todos.map((todo) => ({ ...todo })),
    viewVersion: parts.viewVersion,
  };
  if (record.restoredInputs?.length) view.restoredInputs = record.restoredInputs.map(queuedView);
  if (record.parentThreadId) view.parentThreadId = record.parentThreadId;
  if (record.forkedFrom) view.forkedFrom = { ...record.forkedFrom };
  if (parts.runProgress) view.runProgress = { ...parts.runProgress };
  if (parts.context) view.context = parts.context;
  return view;
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
