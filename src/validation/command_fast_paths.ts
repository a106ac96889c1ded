/**
 * Direct checks of the inputs every conversation sends: a `create` without a
 * title and a `send` of plain text. zod's generic machinery runs each check
 * through several layers of closures, which V8 optimizes only after
 * hundreds of conversations; these few comparisons are cheap from the first
 * call. Each accepts only inputs its schema in `command_schemas.ts` accepts,
 * and returns exactly what the schema returns for them (same fields, same
 * order; `tests/command_fast_paths.test.ts` compares them); anything else,
 * including every input the schema would reject or rewrite, is left to the
 * schema.
 *
 * @module
 */
import { MAX_REQUEST_KEY_LENGTH } from "../identity/request_key.ts";
import type { CreateCommand, SendCommand } from "./command_schemas.ts";
import { MAX_INPUT_TEXT_LENGTH } from "./command_schemas.ts";
import { isWellFormed } from "./parse_input.ts";

/**
 * A `create` input with only a request key, as `commandSchemas.create` parses it.
 *
 * @param input what the caller passed
 * @returns the parsed command, or `undefined` to leave the input to the schema
 */
export function fastCreate(input: unknown): CreateCommand | undefined {
  // A `title` key, even one holding `undefined`, is kept by the schema: its case.
  // Any other key (a `title`, even one holding `undefined`, a `tenant`, or an unknown one) is the schema's case.
  if (!isPlainObject(input) || !onlyKeys(input, CREATE_KEYS)) return undefined;
  const requestKey = input.requestKey;
  return isPlainKey(requestKey) ? { requestKey } : undefined;
}

/**
 * A `send` input of plain text (no attachments, no supplemental context), as
 * `commandSchemas.send` parses it.
 *
 * @param input what the caller passed
 * @returns the parsed command, or `undefined` to leave the input to the schema
 */
export function fastSend(input: unknown): SendCommand | undefined {
  if (!isPlainObject(input) || !onlyKeys(input, SEND_KEYS)) return undefined;
  const threadId = input.threadId;
  const requestKey = input.requestKey;
  const user = input.input;
  if (typeof threadId !== "string" || !isWellFormed(threadId) || !isPlainKey(requestKey)) {
    return undefined;
  }
  if (!isPlainObject(user) || !onlyKeys(user, INPUT_KEYS)) return undefined;
  const text = user.text;
  if (typeof text !== "string" || text.length > MAX_INPUT_TEXT_LENGTH || text.trim() === "") {
    return undefined;
  }
  return { threadId, requestKey, input: { text } };
}

const CREATE_KEYS = ["requestKey"];
const SEND_KEYS = ["threadId", "requestKey", "input"];
const INPUT_KEYS = ["text"];

/** Whether every own key of `value` is one of `keys` (unknown keys are refused by the schema). */
function onlyKeys(value: Record<string, unknown>, keys: readonly string[]): boolean {
  for (const key in value) if (!keys.includes(key)) return false;
  return true;
}

/** An object literal's kind of object (the schema takes others too; they go to it). */
function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null &&
    Object.getPrototypeOf(value) === Object.prototype;
}

/** A request key the schema keeps as it is: already trimmed, 1–256 long, well-formed. */
function isPlainKey(key: unknown): key is string {
  return typeof key === "string" && key.length >= 1 && key.length <= MAX_REQUEST_KEY_LENGTH &&
    key.trim() === key && isWellFormed(key);
}
