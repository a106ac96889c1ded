/**
 * The one place where a public input is checked against its schema and a
 * failure becomes a {@link FloretError}: `invalid_input` listing every
 * problem, or `thread_not_found` when only the thread id is wrong (any id
 * that names no thread, whatever its shape, is not found).
 *
 * @module
 */
import { z } from "zod";
import { FloretError } from "../errors.ts";

/**
 * Parses a public input.
 *
 * @param schema the input's schema
 * @param input what the caller passed (anything at all)
 * @param what names the input in the message, e.g. `send input`
 * @param fast a direct check of the common input: its result when it accepts
 *   (what `schema` would return), `undefined` to leave the input to `schema`
 * @returns the parsed input
 * @throws {FloretError} `invalid_input`, or `thread_not_found` when only `threadId` is wrong
 */
export function parseInput<T>(
  schema: z.ZodType<T>,
  input: unknown,
  what: string,
  fast?: (input: unknown) => T | undefined,
): T {
  let parsed: z.ZodSafeParseResult<T>;
  try {
    const accepted = fast?.(input);
    if (accepted !== undefined) return accepted;
    parsed = schema.safeParse(input);
  } catch (cause) {
    // A getter or Proxy in the caller's object can throw while zod reads it.
    throw new FloretError("invalid_input", `Invalid ${what}: it could not be read`, { cause });
  }
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues;
  if (issues.length > 0 && issues.every((issue) => issue.path[0] === "threadId")) {
    throw threadNotFound((input as { threadId?: unknown })?.threadId);
  }
  throw new FloretError("invalid_input", `Invalid ${what}: ${describeIssues(parsed.error)}`);
}

/**
 * Checks a thread id passed as a positional argument.
 *
 * @param threadId what the caller passed
 * @returns the id, when it could name a thread
 * @throws {FloretError} `thread_not_found` for anything that cannot
 */
export function parseThreadId(threadId: unknown): string {
  if (typeof threadId !== "string" || !isWellFormed(threadId)) throw threadNotFound(threadId);
  return threadId;
}

/**
 * Whether a string is well-formed UTF-16 (no lone surrogate): such a string
 * has no UTF-8 form, so it can name nothing in a store.
 *
 * @param text any string
 * @returns true when every surrogate is paired
 */
export function isWellFormed(text: string): boolean {
  return !LONE_SURROGATE.test(text);
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function threadNotFound(threadId: unknown): FloretError {
  return new FloretError("thread_not_found", `Thread not found: ${printable(threadId)}`);
}

function describeIssues(error: z.ZodError): string {
  try {
    return z.prettifyError(error);
  } catch {
    return error.issues.map((issue) => issue.message).join("; ");
  }
}

/** A short, safe rendering of a caller's value for a message. */
function printable(value: unknown): string {
  if (typeof value === "string") {
    const shown = value.length > 200 ? `${value.slice(0, 200)}…` : value;
    return JSON.stringify(shown);
  }
  try {
    return String(value);
  } catch {
    return typeof value;
  }
}
