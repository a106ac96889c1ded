/**
 * The one reducer of update batches onto a view, for UIs and clients: what
 * `subscribe` yields, applied to what `view()` returned, gives what `view()`
 * would return at the batch's version.
 *
 * @module
 */
import { FloretError } from "../../errors.ts";
import type { ThreadItem, ThreadUpdate, ThreadView, ViewOp } from "./view_types.ts";

/**
 * Applies one update batch to a view and returns the new view; the result
 * equals what `view()` returns at `update.version`. Pure: `view` and the
 * update are not changed (the result shares the items no op touched).
 *
 * A batch the view already includes (`update.version <= view.viewVersion`)
 * returns `view` itself, so "subscribe, then read the view, then apply every
 * batch" needs no bookkeeping. Applying an op twice changes nothing more
 * (an `append-text` lands at its byte `offset`).
 *
 * @example
 * ```ts
 * import { applyUpdate, type ThreadService } from "@floret/engine";
 *
 * async function follow(threads: ThreadService, threadId: string, signal: AbortSignal) {
 *   const updates = threads.subscribe(threadId, { signal });
 *   let view = await threads.view(threadId);
 *   for await (const update of updates) {
 *     view = update.type === "resync" ? await threads.view(threadId) : applyUpdate(view, update);
 *     console.log(view.status, view.items.length);
 *   }
 * }
 * ```
 *
 * @param view a view from `view()`, or a result of `applyUpdate`
 * @param update a `batch` from `subscribe`
 * @returns the view at `update.version`
 * @throws {FloretError} `invalid_input` for a `resync`, or a batch that starts
 *   after the view (batches were missed): read `view()` again
 */
export function applyUpdate(view: ThreadView, update: ThreadUpdate): ThreadView {
  // Self-contained (only FloretError from outside, and no named inner function,
  // which some transpilers wrap), so a page can run this very function from its
  // source (examples/chat_page.ts does).
  if (update.type === "resync") {
    throw new FloretError(
      "invalid_input",
      `A resync cannot be applied (${update.reason}): read view() again`,
    );
  }
  if (update.version <= view.viewVersion) return view;
  if (update.baseVersion > view.viewVersion) {
    throw new FloretError(
      "invalid_input",
      `The batch starts at version ${update.baseVersion} but the view is at ${view.viewVersion}: ` +
        "batches were missed, read view() again",
    );
  }
  const items: ThreadItem[] = [...view.items];
  const next: ThreadView = { ...view, items, viewVersion: update.version };
  const fields = next as unknown as Record<string, unknown>;
  for (const op of update.ops as ViewOp[]) {
    switch (op.op) {
      case "add":
      case "replace": {
        const index = items.findIndex((item) => item.id === op.item.id);
        if (index >= 0) items[index] = op.item;
        else items.push(op.item);
        break;
      }
      case "append-text": {
        const index = items.findIndex((item) => item.id === op.itemId);
        const item = items[index];
        if (!item || item.kind === "tool" || item.kind === "interaction") break;
        // Lands at its UTF-8 byte offset: a text already longer (the op was applied) is cut there.
        let text = item.text;
        let bytes = 0;
        for (let i = 0; i < text.length && bytes <= op.offset; i++) {
          const code = text.charCodeAt(i);
          const pair = code >= 0xd800 && code <= 0xdbff && i + 1 < text.length;
          if (pair) i++;
          bytes += code < 0x80 ? 1 : code < 0x800 ? 2 : pair ? 4 : 3;
        }
        if (bytes > op.offset) {
          text = new TextDecoder().decode(new TextEncoder().encode(text).subarray(0, op.offset));
        }
        items[index] = { ...item, text: text + op.text };
        break;
      }
      case "remove": {
        const index = items.findIndex((item) => item.id === op.itemId);
        if (index < 0) break;
        items.splice(index, 1);
        // The items after it move up one place, as the view's ordinals do.
        for (let i = index; i < items.length; i++) items[i] = { ...items[i]!, ordinal: i };
        break;
      }
      case "component":
        if (op.name === "titleState") {
          next.titleStatus = op.value.titleStatus;
          next.titleGeneration = op.value.titleGeneration;
        } // Every other component is the view field of its name; `null` removes it (a
        // component a newer engine adds lands the same way).
        else if (op.value === null) delete fields[op.name];
        else fields[op.name] = op.value;
        break;
      default:
        break; // an op a newer engine adds: nothing this version can show
    }
  }
  return next;
}
