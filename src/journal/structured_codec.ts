/**
 * `ToolResult.structured` in the journal: superjson's two parts, `json` in
 * the result's `structured` field and `meta` (present when the value held
 * more than JSON: Date, Map, Set, BigInt, undefined) in `structuredMeta`.
 * Decoding gives the handler's value back.
 *
 * @module
 */
import superjson from "superjson";

/**
 * Encodes a structured value for a tool result.
 *
 * @param value whatever the handler returned as `structured`
 * @returns the result's `structured` and, when needed, `structuredMeta`
 * @throws {Error} when the value cannot be stored as JSON (the caller makes it an error result)
 */
export function encodeStructured(
  value: unknown,
): { structured: unknown; structuredMeta?: unknown } {
  const { json, meta } = superjson.serialize(value);
  // The journal writes JSON: prove now that it can, rather than fail the commit.
  JSON.stringify(json);
  if (meta !== undefined) JSON.stringify(meta);
  return meta === undefined ? { structured: json } : { structured: json, structuredMeta: meta };
}

/**
 * Decodes a tool result's stored structured value.
 *
 * @param json the result's `structured`
 * @param meta the result's `structuredMeta`
 * @returns the handler's value (plain JSON when there is no meta)
 */
export function decodeStructured(json: unknown, meta: unknown): unknown {
  if (meta === undefined) return json;
  return superjson.deserialize({ json, meta } as Parameters<typeof superjson.deserialize>[0]);
}
