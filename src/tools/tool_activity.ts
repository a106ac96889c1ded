/**
 * Tool activity: display facts a tool returns beside its output (a label and
 * ordered rows of text, Markdown or code) for a UI to show on the tool item.
 * The host sanitises them; the engine checks their shape, bounds their size
 * and keeps them with the result, so they survive reloads. The model never
 * sees them.
 *
 * @module
 */
import { normaliseWebActivity, type WebActivity } from "./web_activity.ts";

/** One row of activity. */
export interface ActivityRow {
  /** How to render `text`. */
  kind: "text" | "markdown" | "code";
  /** The row's content. */
  text: string;
  /** For code rows: the syntax to highlight (e.g. `"ts"`). */
  language?: string;
  /** Set by the engine when `text` was cut to its bound. */
  truncated?: true;
}

/** Display facts of a tool call (`ToolResult.activity`). */
export interface ToolActivity {
  /** A short label for the call, e.g. "Read src/mod.ts". */
  label?: string;
  /** Ordered rows. */
  rows?: ActivityRow[];
  /** Set by the engine when rows beyond the bound were dropped: how many. */
  omittedRows?: number;
  /** Typed facts of a web search or page read (`web_search`, hosted searches). */
  web?: WebActivity;
}

/** Bounds of activity (characters are UTF-16 code units, cut on a character boundary). */
export const ACTIVITY_LIMITS = {
  label: 200,
  rows: 100,
  text: 8_000,
  code: 64 * 1024,
  language: 32,
  /** All row texts together. */
  total: 256 * 1024,
} as const;

const KINDS: ReadonlySet<string> = new Set(["text", "markdown", "code"]);

/**
 * Checks and bounds a tool's activity. Over-long texts are cut (`truncated`)
 * and rows beyond the bounds dropped (`omittedRows`); a wrong shape rejects
 * the whole activity, since a half-understood display fact would mislead.
 *
 * @param value what the tool returned as `activity`
 * @returns the stored activity, or the reason it was rejected
 */
export function normaliseActivity(
  value: unknown,
): { activity: ToolActivity } | { problem: string } {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return { problem: "activity must be an object" };
  }
  const { label, rows, web } = value as { label?: unknown; rows?: unknown; web?: unknown };
  const activity: ToolActivity = {};
  if (label !== undefined) {
    if (typeof label !== "string") return { problem: "activity.label must be a string" };
    activity.label = cut(wellFormed(label), ACTIVITY_LIMITS.label).text;
  }
  if (web !== undefined) {
    const checked = normaliseWebActivity(web);
    if ("problem" in checked) return checked;
    activity.web = checked.web;
  }
  if (rows === undefined) return { activity };
  if (!Array.isArray(rows)) return { problem: "activity.rows must be an array" };
  const kept: ActivityRow[] = [];
  let budget: number = ACTIVITY_LIMITS.total;
  for (const [index, row] of rows.entries()) {
    const { kind, text, language } = (row ?? {}) as Record<string, unknown>;
    if (typeof kind !== "string" || !KINDS.has(kind)) {
      return { problem: `activity.rows[${index}].kind must be text, markdown or code` };
    }
    if (typeof text !== "string") {
      return { problem: `activity.rows[${index}].text must be a string` };
    }
    if (language !== undefined && (typeof language !== "string" || kind !== "code")) {
      return { problem: `activity.rows[${index}].language is for code rows, as a string` };
    }
    if (kept.length >= ACTIVITY_LIMITS.rows || budget <= 0) continue;
    const bound = Math.min(kind === "code" ? ACTIVITY_LIMITS.code : ACTIVITY_LIMITS.text, budget);
    const content = cut(wellFormed(text), bound);
    budget -= content.text.length;
    const stored: ActivityRow = { kind: kind as ActivityRow["kind"], text: content.text };
    if (language !== undefined) {
      stored.language = cut(language as string, ACTIVITY_LIMITS.language).text;
    }
    if (content.truncated) stored.truncated = true;
    kept.push(stored);
  }
  activity.rows = kept;
  if (kept.length < rows.length) activity.omittedRows = rows.length - kept.length;
  return { activity };
}

/** Cuts to at most `max` code units without splitting a surrogate pair. */
function cut(text: string, max: number): { text: string; truncated: boolean } {
  if (text.length <= max) return { text, truncated: false };
  let end = max;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return { text: text.slice(0, end), truncated: true };
}

/** Lone surrogates (which no UTF-8 store can keep) become U+FFFD. */
function wellFormed(text: string): string {
  return text.replace(
    /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g,
    "\uFFFD",
  );
}
