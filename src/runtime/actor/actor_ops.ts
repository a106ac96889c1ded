/**
 * The view ops an actor publishes for its memory-only components. They are
 * module-level functions of their input, handed to `Publisher.pushHeard`, so
 * no closure is made per publication when nobody listens (a turn publishes
 * its status several times and its progress twice per step).
 *
 * @module
 */
import type { ThreadRecord } from "../../journal/thread_record.ts";
import type { RunProgress, ViewOp } from "../../projection/view/view_types.ts";
import type { ThreadActor } from "./thread_actor.ts";
import { queuedView } from "./view_snapshot.ts";

/**
 * The ops of a status change: the status and the queue.
 *
 * @param actor the thread's actor
 * @returns the two component ops
 */
export function statusOps(actor: ThreadActor): ViewOp[] {
  return [
    { op: "component", name: "status", value: actor.status },
    { op: "component", name: "queue", value: actor.queueView() },
  ];
}

/**
 * The op of a run's progress, a copy (the caller keeps its object).
 *
 * @param progress the progress, or `undefined` when no run goes on
 * @returns the component op
 */
export function progressOps(progress: RunProgress | undefined): ViewOp[] {
  return [{ op: "component", name: "runProgress", value: progress ? { ...progress } : null }];
}

/**
 * The op of the inputs a restore took out of the queue (`view.restoredInputs`).
 *
 * @param record the thread's record after the restore's commit
 * @returns the component op (`null`: none)
 */
export function restoredInputsOps(record: ThreadRecord): ViewOp[] {
  const restored = record.restoredInputs;
  return [{
    op: "component",
    name: "restoredInputs",
    value: restored?.length ? restored.map(queuedView) : null,
  }];
}
