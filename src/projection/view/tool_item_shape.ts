/**
 * A tool item's shape when its result lands: the view model replaces the
 * item and its tool with new objects (views share the old ones), and on the
 * common path builds them as literals with the keys a spread would give, in
 * the spread's order, because that is the most frequent change of a view.
 *
 * @module
 */
import type { ToolCallView, ToolItem } from "./view_types.ts";

/** A tool item's `tool` field. */
export type ToolView = ToolCallView;

/**
 * `{ ...tool, status, output, artifactId?, endedAt }`, the tool's first result.
 * Only `#toolResults` sets `endedAt` (and `output`, `artifactId`, `structured`,
 * `activity`), so a tool without it holds `callId`, `name`, `arguments`,
 * `status` and perhaps `startedAt`, in that order: the literal below builds
 * the spread's keys in the spread's order, about ten times faster than V8's
 * spread with added fields (once per tool result, the most common entry).
 */
export function endedTool(
  tool: ToolView,
  status: ToolView["status"],
  output: string | undefined,
  artifactId: string | undefined,
  endedAt: string,
): ToolView {
  if (tool.endedAt === undefined && artifactId === undefined) {
    const { callId, name, arguments: args, startedAt } = tool;
    return startedAt === undefined
      ? { callId, name, arguments: args, status, output, endedAt }
      : { callId, name, arguments: args, status, startedAt, output, endedAt };
  }
  // Optional fields are added, never deleted: `delete` turns the object into a slow dictionary.
  const ended: ToolView = artifactId === undefined
    ? { ...tool, status, output, endedAt }
    : { ...tool, status, output, artifactId, endedAt };
  if (artifactId === undefined && "artifactId" in ended) delete ended.artifactId;
  return ended;
}

/**
 * `{ ...item, tool }`. A tool item is made by `#step` as the literal below and
 * later gains only `interaction` (an approval's) or a new `ordinal`, `tool`
 * (spreads keep the order): without `interaction` its keys are these, in this order.
 */
export function withTool(item: ToolItem, tool: ToolView): ToolItem {
  if (item.interaction !== undefined) return { ...item, tool };
  const { id, ordinal, kind, turnId, runId, createdAt } = item;
  return { id, ordinal, kind, turnId, runId, createdAt, tool };
}
