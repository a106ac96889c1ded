/**
 * Limits on the argument text of a tool call, checked before it is parsed:
 * every later stage (JSON.parse on some engines, zod, canonical JSON for the
 * repetition guard) recurses once per nesting level, so a deep value from the
 * model must be refused as an invalid call before it can overflow the stack.
 *
 * @module
 */

/** Deepest nesting of arrays and objects accepted in tool arguments. */
export const MAX_ARGUMENT_DEPTH = 128;
/** Longest argument text accepted, in UTF-16 code units (about 4 MiB of ASCII). */
export const MAX_ARGUMENT_LENGTH = 4 * 1024 * 1024;

/**
 * Checks argument text against the limits without parsing it: one pass that
 * counts brackets outside string literals.
 *
 * @param text the raw argument text from the model
 * @returns why the text is refused, or `undefined` when it is within the limits
 */
export function argumentLimitProblem(text: string): string | undefined {
  if (text.length > MAX_ARGUMENT_LENGTH) {
    return `the arguments are ${text.length} characters long; the limit is ${MAX_ARGUMENT_LENGTH}`;
  }
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // a backslash escapes the next character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > MAX_ARGUMENT_DEPTH) {
        return `the arguments nest deeper than ${MAX_ARGUMENT_DEPTH} levels`;
      }
    } else if (c === 0x5d || c === 0x7d) {
      depth--;
    }
  }
  return undefined;
}
