/**
 * SHA-256 fingerprints over canonical JSON, with Web Crypto.
 *
 * @module
 */
import { sha256HexSync } from "../_runtime.ts";
import { canonicalJson } from "./canonical_json.ts";

const encoder = new TextEncoder();

/**
 * Hex SHA-256 of a text.
 *
 * @param text the text, hashed as UTF-8
 * @returns 64 lowercase hex digits
 */
export async function sha256Hex(text: string | Uint8Array): Promise<string> {
  if (sha256HexSync) return sha256HexSync(text);
  const bytes = typeof text === "string" ? encoder.encode(text) : text;
  const digest = new Uint8Array(
    await crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>),
  );
  let hex = "";
  for (const byte of digest) hex += byte.toString(16).padStart(2, "0");
  return hex;
}

/**
 * Fingerprint of a value: SHA-256 hex of its canonical JSON.
 *
 * @param value plain data
 * @returns the fingerprint
 */
export function fingerprintOf(value: unknown): Promise<string> {
  return sha256Hex(canonicalJson(value));
}

/**
 * {@link fingerprintOf} without a promise where the runtime hashes
 * synchronously (Node, Deno and Bun do): the same digest of the same
 * canonical JSON, for callers that would otherwise await a value already there.
 *
 * @param value plain data
 * @returns the fingerprint, or `undefined` where only Web Crypto's asynchronous digest exists
 */
export function fingerprintNow(value: unknown): string | undefined {
  return sha256HexSync === undefined ? undefined : sha256HexSync(canonicalJson(value));
}
