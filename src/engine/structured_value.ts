/**
 * `ToolResult.structured` is host data of any shape; the journal stores JSON.
 * A value JSON cannot carry faithfully — a cycle, a BigInt, a Map or Set, a
 * function or a symbol (which JSON would drop without a word), nesting deeper than
 * {@link MAX_STRUCTURED_DEPTH} — is refused, and the call's result becomes
 * an error the model sees, rather than failing the commit and stranding the
 * turn. (The core reaches zod and no other package, so no richer codec here.)
 *
 * @module
 */
import { callHostCodeSync, type HostOutcome } from "./host_code.ts";

/**
 * Deepest nesting stored. JSON recurses once per level, and how deep it can
 * go differs between runtimes; one limit gives one answer everywhere.
 */
export const MAX_STRUCTURED_DEPTH = 256;

/**
 * Turns a handler's `structured` value into the JSON the journal stores.
 *
 * @param value the handler's value
 * @returns the value as it will read back after a reload, or why it cannot be stored
 */
export function storableStructured(value: unknown): HostOutcome<unknown> {
  return callHostCodeSync((): unknown => {
    const refused = firstUnstorable(value);
    if (refused) throw new Error(`it contains ${refused}`);
    // Throws for cycles and BigInts, and runs any toJSON the host defined.
    const text = JSON.stringify(value);
    if (text === undefined) throw new Error("it has no JSON form");
    return JSON.parse(text);
  });
}

/**
 * What in `value` JSON would drop or cannot write: a function, a symbol, a
 * BigInt, a Map or Set, or nesting beyond {@link MAX_STRUCTURED_DEPTH}. Iterative, so depth
 * cannot overflow here; objects seen twice are walked once.
 */
function firstUnstorable(value: unknown): string | undefined {
  const seen = new Set<object>();
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [next, depth] = stack.pop()!;
    if (typeof next === "function") return "a function";
    if (typeof next === "symbol") return "a symbol";
    if (typeof next === "bigint") return "a BigInt";
    if (typeof next !== "object" || next === null || seen.has(next)) continue;
    // JSON writes both as `{}`: their contents would vanish without a word.
    if (next instanceof Map) return "a Map";
    if (next instanceof Set) return "a Set";
    if (depth >= MAX_STRUCTURED_DEPTH) return `nesting deeper than ${MAX_STRUCTURED_DEPTH} levels`;
    seen.add(next);
    for (const key of Object.keys(next)) {
      stack.push([(next as Record<string, unknown>)[key], depth + 1]);
    }
  }
  return undefined;
}
