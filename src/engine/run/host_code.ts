/**
 * The one boundary around host code inside a run (tool handlers, zod
 * transforms and refinements, permission functions, gateways): whatever it
 * throws, or however it misbehaves, comes back as a value the run can settle.
 *
 * @module
 */

/** What a guarded call of host code produced. */
export type HostOutcome<T> =
  | { ok: true; value: T }
  | { ok: false; error: unknown; message: string };

/**
 * Calls host code, synchronous or not, and never throws: a thrown value of any
 * kind (not only an `Error`), a rejected promise, or a stack overflow inside
 * the call becomes `{ ok: false }` with a readable message.
 *
 * @param fn the host code
 * @returns the value, or the failure with its message
 */
export async function callHostCode<T>(fn: () => T | Promise<T>): Promise<HostOutcome<T>> {
  try {
    return { ok: true, value: await fn() };
  } catch (error) {
    return { ok: false, error, message: describeThrown(error) };
  }
}

/**
 * The synchronous form of {@link callHostCode}, for host code that must
 * answer at once (a zod parse, a permission function).
 *
 * @param fn the host code
 * @returns the value, or the failure with its message
 */
export function callHostCodeSync<T>(fn: () => T): HostOutcome<T> {
  try {
    return { ok: true, value: fn() };
  } catch (error) {
    return { ok: false, error, message: describeThrown(error) };
  }
}

/** Longest description kept; a thrown value is host data of any size. */
const MAX_DESCRIPTION = 2000;

/**
 * A one-line description of any thrown value. It never throws itself: a
 * value may be a symbol, an object without a prototype, a Proxy whose traps
 * throw, or an Error whose `message` getter throws.
 *
 * @param value what was thrown
 * @returns e.g. `TypeError: x is not a function`, `"a string"`, `42`
 */
export function describeThrown(value: unknown): string {
  let text: string;
  try {
    if (value instanceof Error) {
      text = `${String(value.name)}: ${String(value.message)}`;
    } else if (typeof value === "string") {
      text = value;
    } else if (typeof value === "symbol") {
      text = value.toString();
    } else if (typeof value === "object" && value !== null) {
      text = safeJson(value) ?? Object.prototype.toString.call(value);
    } else {
      text = String(value);
    }
  } catch {
    text = "an unreadable thrown value";
  }
  return text.length > MAX_DESCRIPTION ? `${text.slice(0, MAX_DESCRIPTION)}…` : text;
}

function safeJson(value: object): string | undefined {
  try {
    return JSON.stringify(value);
  } catch {
    return undefined;
  }
}
