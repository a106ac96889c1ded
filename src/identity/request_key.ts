/**
 * Request keys: host-chosen idempotency keys on every mutation.
 *
 * @module
 */
import { FloretError } from "../errors.ts";

/** The longest request key accepted, after trimming. */
export const MAX_REQUEST_KEY_LENGTH = 256;

/**
 * Trims and validates a request key.
 *
 * @param key the host's key
 * @returns the trimmed key
 * @throws {FloretError} `invalid_input` when it is not a non-empty string of at most 256 characters
 */
export function normalizeRequestKey(key: unknown): string {
  if (typeof key !== "string") {
    throw new FloretError("invalid_input", "Request key must be a string");
  }
  const trimmed = key.trim();
  if (trimmed.length === 0) throw new FloretError("invalid_input", "Request key is empty");
  if (trimmed.length > MAX_REQUEST_KEY_LENGTH) {
    throw new FloretError(
      "invalid_input",
      `Request key is longer than ${MAX_REQUEST_KEY_LENGTH} characters`,
    );
  }
  return trimmed;
}
