/**
 * A subscriber's own copy of an update.
 *
 * Why: the ops of a batch carry the items and turns the view model keeps
 * (a `replace` hands over the very item it stored), and one batch goes to
 * every subscriber of the thread. ThreadView's contract lets a host apply
 * batches to its view in place and then edit that view; without a copy, such
 * an edit changed the engine's view (every later `view()` showed it) and the
 * view of every other subscriber. Each `next()` therefore hands out a copy,
 * made only for updates a subscriber actually reads (a backlog replaced by
 * `resync` is never copied), at the depth views are copied.
 *
 * @module
 */
import type { ThreadUpdate, ViewOp } from "../../projection/view/view_types.ts";
import { copyItem, copyTurnSummary } from "../../projection/view/item_copy.ts";

/**
 * The caller's own copy of `update`.
 *
 * @param update a batch or resync as the publisher queued it (shared)
 * @returns a copy sharing nothing the caller may change with the engine
 */
export function ownUpdate(update: ThreadUpdate): ThreadUpdate {
  if (update.type === "resync") return { type: "resync", reason: update.reason };
  const ops: ViewOp[] = new Array(update.ops.length);
  for (let i = 0; i < ops.length; i++) ops[i] = ownOp(update.ops[i]!);
  return { type: "batch", baseVersion: update.baseVersion, version: update.version, ops };
}

function ownOp(op: ViewOp): ViewOp {
  switch (op.op) {
    case "add":
    case "replace":
      return { op: op.op, item: copyItem(op.item) };
    case "component":
      // Turns are copied as views copy them; the other components are small plain values.
      return op.name === "turns"
        ? { op: "component", name: "turns", value: op.value.map(copyTurnSummary) }
        : { ...op, value: structuredClone(op.value) } as ViewOp;
    default:
      return { ...op };
  }
}
