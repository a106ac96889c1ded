/**
 * A thread's title as hosts see it: the title, where it stands, and its
 * generation. Read from the thread record, so the view, the list and every
 * host sharing the store agree.
 *
 * @module
 */
import type { AdmittedInput } from "../../journal/entries.ts";
import type { ThreadRecord } from "../../journal/thread_record.ts";
import type { ViewOp } from "./view_types.ts";

/**
 * `none`: no title yet. `fallback`: the first message's first line.
 * `pending`: a generated title is being requested (the fallback shows meanwhile).
 * `ready`: a host title, or a generated one. `failed`: generation failed; the fallback stays.
 */
export type TitleStatus = "none" | "fallback" | "pending" | "ready" | "failed";

/** The title fields of a view or a list line. */
export interface TitleState {
  /** The title, when there is one. */
  title?: string;
  /** Where the title stands. */
  titleStatus: TitleStatus;
  /** Grows with every host title and every generation claim; order title updates by it. */
  titleGeneration: number;
}

/** Longest fallback title, in characters (code points). */
export const MAX_FALLBACK_TITLE = 200;

/**
 * The title state of a record. A pending claim whose deadline has passed
 * reads as `fallback`: its request was cut off by then, so nothing can
 * install it any more.
 *
 * @param record the thread record
 * @param now the clock, for an expired claim
 */
export function titleStateOf(record: ThreadRecord, now: number = Date.now()): TitleState {
  let status: TitleStatus = record.titleStatus ??
    (record.title === undefined ? "none" : "ready");
  if (status === "pending" && (record.titleClaim?.until ?? 0) < now) status = "fallback";
  const state: TitleState = { titleStatus: status, titleGeneration: record.titleGeneration ?? 0 };
  if (record.title !== undefined) state.title = record.title;
  return state;
}

/**
 * The fallback title of a first message: its first non-blank line with runs
 * of whitespace collapsed, at most {@link MAX_FALLBACK_TITLE} characters
 * (never splitting a character); for an image-only message, the first
 * attachment's name. `undefined` when neither gives any text.
 */
export function fallbackTitle(input: AdmittedInput): string | undefined {
  // Every admitted first message passes here: collapse lines only up to the first
  // non-empty one, and look at attachments only when the text has none.
  let text: string | undefined;
  for (const line of input.text.split(/\r\n|\r|\n/)) {
    const collapsed = collapse(line);
    if (collapsed !== "") {
      text = collapsed;
      break;
    }
  }
  if (text === undefined) {
    const name = (input.attachments ?? [])
      .map((attachment) => (attachment as { name?: unknown } | null)?.name)
      .find((value): value is string => typeof value === "string" && collapse(value) !== "");
    if (name === undefined) return undefined;
    text = collapse(name);
  }
  // No more UTF-16 units than the limit means no more code points either.
  if (text.length <= MAX_FALLBACK_TITLE) return text;
  const chars = Array.from(text);
  return chars.length <= MAX_FALLBACK_TITLE ? text : chars.slice(0, MAX_FALLBACK_TITLE).join("");
}

function collapse(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

/**
 * The title as subscribers were told of it, in one string: a change of it
 * means the title must be published again.
 *
 * @param record the thread's record
 * @returns generation, status and title, joined
 */
export function titleKeyOf(record: ThreadRecord): string {
  const state = titleStateOf(record);
  return `${state.titleGeneration}|${state.titleStatus}|${state.title ?? ""}`;
}

/**
 * The view ops that show a record's title to subscribers.
 *
 * @param record the thread record
 * @returns the `title` and `titleState` component ops
 */
export function titleOps(record: ThreadRecord): ViewOp[] {
  const state = titleStateOf(record);
  return [
    { op: "component", name: "title", value: state.title ?? null },
    { op: "component", name: "titleState", value: state },
  ];
}
