/**
 * An open tool batch of the provider history (history_model.ts): a step's
 * calls waiting for their results, which the model must read in call order
 * however they commit.
 *
 * @module
 */
import type { HistoryMessage } from "./history_message.ts";

/**
 * A step with tool calls: its results are kept in call order whatever order
 * they commit in, and user messages that arrive while it is open (answers,
 * steering) follow its results.
 */
export class Batch {
  readonly assistant: HistoryMessage;
  readonly order: readonly string[];
  /** Index of the exchange that holds it (a late result changes that exchange). */
  readonly exchange: number;
  // Results by position in `order` (every position of a call id, should one
  // repeat), with how many distinct calls have one: a step's few slots cost
  // less than a Map per tool step that every idle actor would keep.
  readonly #results: (HistoryMessage | undefined)[];
  #filled = 0;
  /** User messages that arrived while it was open (made at the first: most batches get none). */
  #after: HistoryMessage[] | undefined;

  /**
   * @param assistant the step's assistant message (with its calls)
   * @param order the step's call ids, in the order the model made them
   * @param exchange index of the exchange that holds the step
   */
  constructor(assistant: HistoryMessage, order: readonly string[], exchange: number) {
    this.assistant = assistant;
    this.order = order;
    this.exchange = exchange;
    this.#results = new Array(order.length).fill(undefined);
  }

  /** Whether every call has its result. */
  get complete(): boolean {
    return this.#filled >= this.order.length;
  }

  /** Sets the result of one of its calls (a later one for the same call replaces it). */
  setResult(callId: string, message: HistoryMessage): void {
    let isNew = true;
    for (let i = 0; i < this.order.length; i++) {
      if (this.order[i] !== callId) continue;
      if (this.#results[i] !== undefined) isNew = false;
      this.#results[i] = message;
    }
    if (isNew) this.#filled++;
  }

  /** Adds a result or a late user message, placed with the batch for compaction cuts. */
  adopt(message: HistoryMessage): HistoryMessage {
    message.position = this.assistant.seq;
    return message;
  }

  /** The results in call order, then the user messages that arrived while it was open. */
  rest(out: HistoryMessage[]): void {
    for (const result of this.#results) if (result) out.push(result);
    for (const message of this.#after ?? NO_MESSAGES) out.push(message);
  }

  /** Keeps a user message that arrived while the batch was open, after its results. */
  addAfter(message: HistoryMessage): void {
    (this.#after ??= []).push(this.adopt(message));
  }
}

// What a batch without late user messages lists after its results (read-only by type).
const NO_MESSAGES: readonly HistoryMessage[] = [];
