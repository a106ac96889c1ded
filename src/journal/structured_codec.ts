/**
 * The stored form of `ToolResult.structured`: JSON plus a list of type notes,
 * so that values JSON alone would change or drop — `undefined`, BigInt, Date,
 * Map, Set, RegExp, NaN, ±Infinity and -0 — read back as they were returned.
 * The JSON part stays readable by itself (a Date is its ISO text, a Map its
 * entry pairs, a Set its members), and a note says how to restore one value:
 * the path to it (object keys and array indexes) and its type. The core keeps
 * zod as its only dependency, so this small codec replaces superjson.
 *
 * What cannot be carried faithfully — a function, a symbol, a cycle, nesting
 * deeper than {@link MAX_STRUCTURED_DEPTH} — is refused with a reason.
 *
 * @module
 */

/** Deepest nesting stored; one limit gives one answer on every runtime. */
export const MAX_STRUCTURED_DEPTH = 256;

/** How to restore one value of the JSON part. */
export type StructuredType =
  | "undefined"
  | "bigint"
  | "number"
  | "date"
  | "map"
  | "set"
  | "regexp";

/** A type note: the path from the root to the value, and its type. */
export type StructuredNote = [path: (string | number)[], type: StructuredType];

/** A structured value as the journal keeps it. */
export interface EncodedStructured {
  json: unknown;
  /** Absent when the value is plain JSON. */
  types?: StructuredNote[];
}

/** Why a value cannot be stored. */
export class UnstorableValue extends Error {}

/**
 * Encodes a handler's value. Runs host code (getters, `toJSON`), so callers
 * guard it.
 *
 * @param value any value
 * @returns its JSON part and type notes
 * @throws {UnstorableValue} with the reason when it cannot be carried faithfully
 */
export function encodeStructured(value: unknown): EncodedStructured {
  const types: StructuredNote[] = [];
  const json = encode(value, [], 0, new Set(), types);
  return types.length > 0 ? { json, types } : { json };
}

function encode(
  value: unknown,
  path: (string | number)[],
  depth: number,
  ancestors: Set<object>,
  types: StructuredNote[],
): unknown {
  switch (typeof value) {
    case "string":
    case "boolean":
      return value;
    case "undefined":
      types.push([path, "undefined"]);
      return null;
    case "bigint":
      types.push([path, "bigint"]);
      return value.toString();
    case "number":
      if (Number.isFinite(value) && !Object.is(value, -0)) return value;
      types.push([path, "number"]);
      return Object.is(value, -0) ? "-0" : String(value);
    case "function":
      throw new UnstorableValue("it contains a function");
    case "symbol":
      throw new UnstorableValue("it contains a symbol");
  }
  if (value === null) return null;
  const object = value as object;
  if (depth >= MAX_STRUCTURED_DEPTH) {
    throw new UnstorableValue(`it is nested deeper than ${MAX_STRUCTURED_DEPTH} levels`);
  }
  if (ancestors.has(object)) throw new UnstorableValue("it contains a cycle");
  ancestors.add(object);
  try {
    const inner = (item: unknown, key: string | number) =>
      encode(item, [...path, key], depth + 1, ancestors, types);
    if (object instanceof Date) {
      types.push([path, "date"]);
      return Number.isNaN(object.getTime()) ? null : object.toISOString();
    }
    if (object instanceof RegExp) {
      types.push([path, "regexp"]);
      return [object.source, object.flags];
    }
    if (object instanceof Map) {
      types.push([path, "map"]);
      return [...object].map(([k, v], i) => {
        const pairPath = [...path, i];
        return [
          encode(k, [...pairPath, 0], depth + 2, ancestors, types),
          encode(v, [...pairPath, 1], depth + 2, ancestors, types),
        ];
      });
    }
    if (object instanceof Set) {
      types.push([path, "set"]);
      return [...object].map(inner);
    }
    if (Array.isArray(object)) {
      return Array.from({ length: object.length }, (_, i) => inner(object[i], i));
    }
    const toJSON = (object as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === "function") {
      // As JSON would: the object's own JSON form (a URL's text, a class's chosen fields).
      return encode(toJSON.call(object, ""), path, depth + 1, new Set(), types);
    }
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(object)) {
      out[key] = inner((object as Record<string, unknown>)[key], key);
    }
    return out;
  } finally {
    ancestors.delete(object);
  }
}

/**
 * Restores a stored value: the JSON part with each noted value turned back
 * into its type. Notes that do not fit the JSON part are ignored (the JSON
 * value stands), so a damaged note can never make a view unreadable.
 *
 * @param json the stored JSON part (not modified)
 * @param types the stored notes, if any
 * @returns the value as the handler returned it
 */
export function decodeStructured(json: unknown, types?: readonly StructuredNote[]): unknown {
  if (!types || types.length === 0) return json;
  const root = { value: structuredClone(json) as unknown };
  // Deepest first: a container is rebuilt from members that are already restored.
  const notes = [...types].sort((a, b) => b[0].length - a[0].length);
  for (const [path, type] of notes) {
    let parent: Record<string | number, unknown> = root;
    let key: string | number = "value";
    let reachable = true;
    for (const step of path) {
      const next = parent[key];
      if (typeof next !== "object" || next === null) {
        reachable = false;
        break;
      }
      parent = next as Record<string | number, unknown>;
      key = step;
    }
    if (reachable) parent[key] = restore(parent[key], type);
  }
  return root.value;
}

function restore(value: unknown, type: StructuredType): unknown {
  switch (type) {
    case "undefined":
      return undefined;
    case "bigint":
      return typeof value === "string" && /^-?\d+$/.test(value) ? BigInt(value) : value;
    case "number":
      return value === "-0" ? -0 : typeof value === "string" ? Number(value) : value;
    case "date":
      return value === null
        ? new Date(Number.NaN)
        : typeof value === "string"
        ? new Date(value)
        : value;
    case "regexp": {
      if (!Array.isArray(value) || typeof value[0] !== "string" || typeof value[1] !== "string") {
        return value;
      }
      try {
        return new RegExp(value[0], value[1]);
      } catch {
        return value; // flags this runtime does not know: the stored pair stands
      }
    }
    case "map":
      return Array.isArray(value) && value.every((pair) => Array.isArray(pair) && pair.length === 2)
        ? new Map(value as [unknown, unknown][])
        : value;
    case "set":
      return Array.isArray(value) ? new Set(value) : value;
  }
}
