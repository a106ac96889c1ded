/**
 * The items of a stretch of a path, projected on their own: the view model
 * fed only the entries of some whole turns. Used for history pages of
 * threads not in memory; ordinals are local (0 for the stretch's first item).
 *
 * @module
 */
import type { Entry } from "../../journal/entries.ts";
import { Interactions } from "../interactions.ts";
import type { ThreadItem } from "./view_types.ts";
import { type OpSink, ViewModel } from "./view_model.ts";

/** Nobody listens to a page's projection. */
const SILENT: OpSink = { hasSubscribers: false, push() {}, touch() {} };

/**
 * Projects entries that start at a turn's start into items.
 *
 * @param entries consecutive entries of one path, the first a `turn_started`
 * @returns the items they show, as the whole path's view shows them but with
 *   ordinals counted from the first of them
 */
export function projectItems(entries: readonly Entry[]): ThreadItem[] {
  const interactions = new Interactions();
  const view = new ViewModel(SILENT, interactions);
  for (const entry of entries) {
    interactions.apply(entry);
    view.apply(entry);
  }
  return view.items.slice();
}
