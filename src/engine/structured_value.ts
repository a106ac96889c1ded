/**
 * `ToolResult.structured` is host data of any shape. It is stored with
 * superjson, which carries what JSON cannot (BigInt, Date, Map, Set,
 * undefined, repeated and circular references); what superjson would drop
 * silently (functions, symbols) is refused instead, so a stored value never
 * differs from the one the handler returned without anyone being told.
 *
 * @module
 */
import superjson from "superjson";
import { callHostCodeSync, type HostOutcome } from "./host_code.ts";

/**
 * superjson's two parts: JSON-safe data and the type annotations that restore
 * it (`superjson.deserialize({ json, meta })` gives the handler's value back).
 */
export interface StoredStructured {
  json: unknown;
  meta?: unknown;
}

/**
 * Turns a handler's `structured` value into what the journal stores.
 *
 * @param value the handler's value
 * @returns the stored form, or why it cannot be stored
 */
export function storableStructured(value: unknown): HostOutcome<StoredStructured> {
  return callHostCodeSync((): StoredStructured => {
    const dropped = firstUnstorable(value);
    if (dropped) {
      throw new Error(`it contains ${dropped.startsWith("nesting") ? "" : "a "}${dropped}`);
    }
    const { json, meta } = superjson.serialize(value);
    // The journal writes JSON; prove now that it can, rather than fail the commit.
    JSON.stringify(json);
    JSON.stringify(meta);
    return meta === undefined ? { json } : { json, meta };
  });
}

/**
 * Deepest nesting stored. superjson and JSON recurse once per level, and how
 * deep they can go differs between runtimes; one limit gives one answer.
 */
export const MAX_STRUCTURED_DEPTH = 256;

/**
 * What in `value` cannot be stored: a function, a symbol, or nesting beyond
 * {@link MAX_STRUCTURED_DEPTH}. Iterative, so depth cannot overflow here.
 */
function firstUnstorable(value: unknown): string | undefined {
  const seen = new Set<object>();
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [next, depth] = stack.pop()!;
    if (typeof next === "function") return "function";
    if (typeof next === "symbol") return "symbol";
    if (typeof next !== "object" || next === null || seen.has(next)) continue;
    if (depth >= MAX_STRUCTURED_DEPTH) return `nesting deeper than ${MAX_STRUCTURED_DEPTH} levels`;
    seen.add(next);
    if (next instanceof Map) {
      for (const [key, item] of next) stack.push([key, depth + 1], [item, depth + 1]);
    } else if (next instanceof Set) {
      for (const item of next) stack.push([item, depth + 1]);
    } else {
      for (const key of Object.keys(next)) {
        stack.push([(next as Record<string, unknown>)[key], depth + 1]);
      }
    }
  }
  return undefined;
}
