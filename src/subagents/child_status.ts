/**
 * What a parent learns about a child: its status, its report and a preview,
 * all read from the child's view (the journal is the only truth; nothing
 * about a child is stored a second time on the parent).
 *
 * @module
 */
import { REPORT_TOOL_NAME } from "../config/agent.ts";
import type { ThreadView } from "../projection/view/view_types.ts";
import { boundUtf8, MAX_PREVIEW_BYTES, MAX_REPORT_BYTES } from "./bounds.ts";

/** The tool a child calls to hand its report to the parent. */
export const REPORT_TOOL: string = REPORT_TOOL_NAME;

/** A child's status as the parent's tools show it. */
export type ChildStatus =
  | "running"
  | "waiting"
  | "completed"
  | "failed"
  | "cancelled"
  | "interrupted"
  | "idle";

/**
 * The thread's status while it is running or waiting, else its last turn's outcome.
 *
 * @param view the child's view
 * @returns the status
 */
export function childStatus(view: ThreadView): ChildStatus {
  if (view.status === "running" || view.status === "stopping") return "running";
  if (view.status === "waiting") return "waiting";
  return view.turns.at(-1)?.outcome ?? "idle";
}

/**
 * The child's report: the text of its last `report_to_parent` call, else its
 * last assistant text, within {@link MAX_REPORT_BYTES}.
 *
 * @param view the child's view
 * @returns the report, or `undefined` when the child has said nothing yet
 */
export function childReport(view: ThreadView): string | undefined {
  const text = reportedText(view) ?? lastAssistantText(view);
  return text === undefined ? undefined : boundUtf8(text, MAX_REPORT_BYTES);
}

/**
 * A short look at the child: its report so far, within {@link MAX_PREVIEW_BYTES}.
 *
 * @param view the child's view
 * @returns the preview, or `undefined` when there is nothing to show
 */
export function childPreview(view: ThreadView): string | undefined {
  const text = reportedText(view) ?? lastAssistantText(view);
  return text === undefined ? undefined : boundUtf8(text, MAX_PREVIEW_BYTES);
}

const encoder = new TextEncoder();

function reportedText(view: ThreadView): string | undefined {
  for (let at = view.items.length - 1; at >= 0; at--) {
    const tool = view.items[at].tool;
    if (tool?.name !== REPORT_TOOL) continue;
    if (tool.status !== "completed" && tool.status !== "error") continue;
    try {
      const parsed: unknown = JSON.parse(tool.arguments);
      const text = (parsed as { text?: unknown })?.text;
      if (typeof text !== "string") continue;
      // An error result counts only as the tool's "too long" answer: the report stands, cut.
      if (tool.status === "completed" || encoder.encode(text).length > MAX_REPORT_BYTES) {
        return text;
      }
    } catch {
      // A call that did not parse never completed; keep looking.
    }
  }
  return undefined;
}

function lastAssistantText(view: ThreadView): string | undefined {
  for (let at = view.items.length - 1; at >= 0; at--) {
    const item = view.items[at];
    if (item.kind === "assistant" && item.text) return item.text;
  }
  return undefined;
}
