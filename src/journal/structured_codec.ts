/**
 * `ToolResult.structured` in the journal: encoded with superjson so that
 * Date, Map, Set, BigInt and undefined come back as they went in. Journal
 * values are JSON; the encoded form is plain JSON tagged with its format.
 *
 * @module
 */
import superjson from "superjson";

/** The stored form of a structured value. */
export interface EncodedStructured {
  format: "superjson";
  json: unknown;
  meta?: unknown;
}

/**
 * Encodes a structured value for the journal.
 *
 * @param value whatever the handler returned as `structured`
 * @returns plain JSON data
 * @throws {Error} when superjson cannot carry the value (the caller makes it an error result)
 */
export function encodeStructured(value: unknown): EncodedStructured {
  const { json, meta } = superjson.serialize(value);
  // Round-trip once through JSON now, so a value the journal cannot store fails here, in the call.
  const stored: EncodedStructured = JSON.parse(
    JSON.stringify({ format: "superjson", json, ...(meta ? { meta } : {}) }),
  );
  return stored;
}

/**
 * Decodes what {@link encodeStructured} stored; other shapes (older journals)
 * are returned unchanged.
 *
 * @param stored the stored value
 * @returns the structured value
 */
export function decodeStructured(stored: unknown): unknown {
  if (
    typeof stored === "object" && stored !== null &&
    (stored as { format?: unknown }).format === "superjson"
  ) {
    const { json, meta } = stored as EncodedStructured;
    return superjson.deserialize({ json, meta } as Parameters<typeof superjson.deserialize>[0]);
  }
  return stored;
}
