/**
 * Where a view's changes go: the thread's publisher, or a sink that only
 * counts them when nobody listens.
 *
 * @module
 */
import type { ViewOp } from "./view_types.ts";

/** Where a view's changes go (the thread's publisher). */
export interface OpSink {
  /** Whether building ops is worth it. */
  readonly hasSubscribers: boolean;
  /** Publishes one change. */
  push(op: ViewOp): void;
  /** Records a change nobody listens to (the view version still moves). */
  touch(): void;
}
