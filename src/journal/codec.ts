/**
 * Durable values are canonical JSON in UTF-8: deterministic bytes for equal values.
 *
 * @module
 */
import { FloretError } from "../errors.ts";
import { canonicalJson } from "../identity/canonical_json.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * Encodes a durable value.
 *
 * @param value plain JSON data
 * @returns UTF-8 canonical JSON
 */
export function encodeValue(value: unknown): Uint8Array {
  return encoder.encode(canonicalJson(value));
}

/**
 * Decodes a durable value.
 *
 * @param bytes what {@link encodeValue} wrote
 * @returns the value
 * @throws {FloretError} `storage_failure` when the bytes are not JSON
 */
export function decodeValue<T>(bytes: Uint8Array): T {
  try {
    return JSON.parse(decoder.decode(bytes)) as T;
  } catch (cause) {
    throw new FloretError("storage_failure", "Stored value is not valid JSON", { cause });
  }
}
