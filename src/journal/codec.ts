/**
 * Durable values are JSON in UTF-8. The engine builds every value in a fixed
 * field order, so equal values encode to equal bytes without sorting keys on
 * the hot path (request fingerprints, which hash host and provider data, use
 * canonical JSON instead).
 *
 * @module
 */
import type { z } from "zod";
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
  return encoder.encode(encodeText(value));
}

/**
 * A durable value's JSON text, whose UTF-8 bytes are what {@link encodeValue}
 * returns (for a store that keeps the text and encodes it on read).
 *
 * @param value plain JSON data
 * @returns JSON (empty for a value JSON cannot express, as `encodeValue` gives no bytes then)
 */
export function encodeText(value: unknown): string {
  return JSON.stringify(value) ?? "";
}

/**
 * Decodes a durable value and checks its shape.
 *
 * @param bytes what {@link encodeValue} wrote
 * @param shape the schema the value must match (see stored_shapes.ts)
 * @param what names the value in the error, e.g. `thread record`
 * @returns the value, as stored
 * @throws {FloretError} `storage_failure` when the bytes are not JSON or not of that shape
 */
export function decodeValue<T>(bytes: Uint8Array, shape: z.ZodType, what: string): T {
  return checkStoredShape<T>(decodeJson(bytes, what), shape, what);
}

/**
 * Decodes stored JSON without checking its shape (the caller checks it next).
 *
 * @param bytes what {@link encodeValue} wrote
 * @param what names the value in the error
 * @returns the parsed JSON
 * @throws {FloretError} `storage_failure` when the bytes are not JSON
 */
export function decodeJson(bytes: Uint8Array, what: string): unknown {
  try {
    return JSON.parse(decoder.decode(bytes));
  } catch (cause) {
    throw new FloretError("storage_failure", `Stored ${what} is not valid JSON`, { cause });
  }
}

/**
 * Checks a decoded value's shape.
 *
 * @param value decoded JSON
 * @param shape the schema it must match
 * @param what names the value in the error
 * @returns the value, as stored (loose shapes only check; a copy would cost time)
 * @throws {FloretError} `storage_failure` when it does not match
 */
export function checkStoredShape<T>(value: unknown, shape: z.ZodType, what: string): T {
  const checked = shape.safeParse(value);
  if (!checked.success) {
    const issue = checked.error.issues[0];
    throw new FloretError(
      "storage_failure",
      `Stored ${what} has the wrong shape: ${issue?.path.join(".") || "(root)"}: ${issue?.message}`,
      { cause: checked.error },
    );
  }
  return value as T;
}
