/**
 * What the PostgreSQL store makes of a driver error: the SPI's
 * `storage_failure`, and whether the server surely rolled the statement back.
 *
 * @module
 */

import { FloretError } from "@floret/engine/spi";

/**
 * Wraps a driver error as the SPI's `storage_failure`, keeping it as `cause`.
 *
 * @param error what the driver threw
 * @param operation what the store was doing
 * @returns the error to throw
 */
export function storageFailure(error: unknown, operation: string): FloretError {
  if (error instanceof FloretError) return error;
  const detail = error instanceof Error ? error.message : String(error);
  return new FloretError("storage_failure", `postgresStore ${operation} failed: ${detail}`, {
    cause: error,
  });
}

/**
 * Whether the server answered a statement with an ERROR, which rolls back
 * the statement's own transaction (every commit runs outside `BEGIN`): then
 * nothing of it landed and it may be sent again. A lost connection, a FATAL
 * or a client-side failure says nothing of the sort — the commit may have
 * landed — so those are not.
 *
 * @param error what the driver threw
 * @returns true when the statement surely changed nothing
 */
export function rolledBack(error: unknown): boolean {
  if (!(error instanceof Error) || error.name !== "PostgresError") return false;
  return (error as { severity?: unknown }).severity === "ERROR";
}
