/**
 * The projections of one thread's path, fed together: the host's view, the
 * provider history and the open calls. Each reads journal entries only; the
 * thread actor owns one set and replaces it whole when it reloads.
 *
 * @module
 */
import type { Entry } from "../journal/entries.ts";
import { ContextModel } from "./history/context_model.ts";
import { HistoryModel } from "./history/history_model.ts";
import { Interactions } from "./interactions.ts";
import { OpenCalls } from "./open_calls.ts";
import { type OpSink, ViewModel } from "./view/view_model.ts";

/** The view, provider history and open calls of one thread, kept in step. */
export class ThreadProjections {
  /** Items and turns as people see them, plus the live overlay of a streaming step. */
  readonly view: ViewModel;
  /** The messages the model is sent. */
  readonly history: HistoryModel;
  /** Calls of the active turn that still need a result. */
  readonly openCalls: OpenCalls;
  /** Compaction records and usage. */
  readonly context: ContextModel;
  /** Approvals and questions, pending or resolved. */
  readonly interactions: Interactions;

  /** @param sink receives every change of the view, in order */
  constructor(sink: OpSink) {
    this.interactions = new Interactions();
    this.view = new ViewModel(sink, this.interactions);
    this.history = new HistoryModel(this.interactions);
    this.openCalls = new OpenCalls();
    this.context = new ContextModel();
  }

  /** Applies one committed entry to every projection (interactions first: the others read them). */
  apply(entry: Entry): void {
    this.interactions.apply(entry);
    this.view.apply(entry);
    this.history.apply(entry);
    this.openCalls.apply(entry);
    this.context.apply(entry);
  }
}
