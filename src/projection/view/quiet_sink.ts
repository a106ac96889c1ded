/**
 * A view sink that drops every change until it is swapped in: a projection
 * rebuilt from the journal is built silently (its subscribers are told to
 * read the view again instead) and then reports to the real sink.
 *
 * @module
 */
import type { ViewOp } from "./view_types.ts";
import type { OpSink } from "./view_model.ts";

/** Forwards to `target` only once {@link swapped} was called. */
export class QuietUntilSwapped implements OpSink {
  readonly #target: OpSink;
  #live = false;

  /** @param target the sink changes go to after the swap */
  constructor(target: OpSink) {
    this.#target = target;
  }

  /** The projection is in place: from now on every change is reported. */
  swapped(): void {
    this.#live = true;
  }

  /** Whether building ops is worth it: never before the swap. */
  get hasSubscribers(): boolean {
    return this.#live && this.#target.hasSubscribers;
  }

  /** Forwards a change after the swap. */
  push(op: ViewOp): void {
    if (this.#live) this.#target.push(op);
  }

  /** Forwards a version move after the swap. */
  touch(): void {
    if (this.#live) this.#target.touch();
  }
}
