/**
 * Durable values are JSON in UTF-8. The engine builds every value in a fixed
 * field order, so equal values encode to equal bytes without sorting keys on
 * the hot path (request fingerprints, which hash host and provider data, use
 * canonical JSON instead).
 *
 * @module
 */
import { FloretError } from "../errors.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * Encodes a durable value.
 *
 * @param value plain JSON data
 * @returns UTF-8 JSON
 */
export function encodeValue(value: unknown): Uint8Array {
  return encoder.encode(JSON.stringify(value));
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
