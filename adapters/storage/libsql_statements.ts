/**
 * SQL for the libSQL store's reads and its single-batch commit, plus the
 * failure handling around them: which errors mean "a check failed", which
 * mean "another writer holds the lock, try again", and which are I/O
 * failures the caller must see.
 *
 * @module
 */

import type { InStatement } from "@libsql/client";
import { FloretError } from "@floret/engine/spi";
import type { CommitPlan, KvScan } from "@floret/engine/spi";
import { CHECK_FAILED } from "./libsql_schema.ts";

const CHECK_SQL = "INSERT INTO floret_check (key, version) VALUES (?, ?)";
const NEXT_VERSION_SQL =
  "UPDATE floret_meta SET value = value + 1 WHERE name = 'version' RETURNING value";
// Same 20-digit shape as formatVersion in src/spi, computed inside the batch
// because the counter is only known there.
const SET_SQL = `INSERT INTO kv (key, value, version)
  VALUES (?, ?, (SELECT printf('%020d', value) FROM floret_meta WHERE name = 'version'))
  ON CONFLICT (key) DO UPDATE SET value = excluded.value, version = excluded.version`;
const DELETE_SQL = "DELETE FROM kv WHERE key = ?";

/** Most keys bound into one `IN (...)` list, well under SQLite's parameter limit. */
export const GET_CHUNK = 500;

/**
 * The statements of one commit, to run as one write batch: checks first (any
 * failing one aborts everything), then the version bump, then the writes.
 *
 * @param plan a validated commit
 * @returns the statements; the version bump's result is at index `plan.checks.length`
 */
export function commitStatements(plan: CommitPlan): InStatement[] {
  return [
    ...plan.checks.map((check) => ({ sql: CHECK_SQL, args: [check.key, check.version] })),
    NEXT_VERSION_SQL,
    ...plan.writes.map((write) =>
      write.value === null
        ? { sql: DELETE_SQL, args: [write.key] }
        : { sql: SET_SQL, args: [write.key, write.value] }
    ),
  ];
}

/**
 * A point read of up to {@link GET_CHUNK} keys.
 *
 * @param keys encoded keys
 * @returns one SELECT
 */
export function getStatement(keys: readonly Uint8Array[]): InStatement {
  const marks = keys.map(() => "?").join(", ");
  return { sql: `SELECT key, value, version FROM kv WHERE key IN (${marks})`, args: [...keys] };
}

/**
 * The range read of a planned scan.
 *
 * @param scan a non-empty plan from planScan
 * @returns one SELECT
 */
export function listStatement(scan: KvScan): InStatement {
  const order = scan.reverse ? "DESC" : "ASC";
  return {
    sql:
      `SELECT key, value, version FROM kv WHERE key >= ? AND key < ? ORDER BY key ${order} LIMIT ?`,
    // SQLite reads a negative LIMIT as "no limit".
    args: [scan.lower, scan.upper, Number.isFinite(scan.limit) ? scan.limit : -1],
  };
}

/**
 * Reads a BLOB column, which clients return as ArrayBuffer (local) or Uint8Array.
 *
 * @param value a row value
 * @returns the bytes
 */
export function blob(value: unknown): Uint8Array {
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  if (value instanceof Uint8Array) return value;
  throw new FloretError(
    "storage_failure",
    `Store row is corrupt: expected a blob, got ${typeof value}`,
  );
}

function describe(error: unknown): { code: string; message: string } {
  const code = (error as { code?: unknown })?.code;
  const message = (error as { message?: unknown })?.message;
  return {
    code: typeof code === "string" ? code : "",
    message: typeof message === "string" ? message : "",
  };
}

/**
 * Whether an error is exactly the check trigger's RAISE.
 *
 * @param error what the batch threw
 * @returns true for a failed version check
 */
export function isCheckFailure(error: unknown): boolean {
  return describe(error).message.includes(CHECK_FAILED);
}

/**
 * Whether another connection held the lock: the statement did not run and a retry is safe.
 *
 * @param error what the client threw
 * @returns true for SQLITE_BUSY / SQLITE_LOCKED
 */
export function isBusy(error: unknown): boolean {
  const { code, message } = describe(error);
  return /^SQLITE_(BUSY|LOCKED)/.test(code) ||
    /SQLITE_(BUSY|LOCKED)|database (table )?is locked/.test(message);
}

// SQLite hands a free lock to whichever waiter polls first, so under heavy
// contention one writer can lose many times in a row; the bound is therefore
// a time budget rather than a small attempt count.
const RETRY_BUDGET_MS = 30_000;

/**
 * Runs an operation, retrying with jittered exponential backoff (capped at
 * 200 ms) while the database is busy, for at most 30 s; any other failure, or
 * a busy one past the budget, is rethrown as-is for the caller to map.
 *
 * @param work the operation; must be safe to repeat after a busy failure
 * @param recover runs after each busy failure, before the backoff (a busy
 *   failure inside it only means the next attempt recovers again)
 * @param failed the failure of a first attempt the caller already made
 *   itself (synchronously): recovery and backoff then come first
 * @returns its result
 */
export async function retryBusy<T>(
  work: () => Promise<T>,
  recover?: () => Promise<void>,
  failed?: { error: unknown },
): Promise<T> {
  const deadline = Date.now() + RETRY_BUDGET_MS;
  let failure = failed;
  for (let attempt = 1;; attempt++) {
    if (failure === undefined) {
      try {
        return await work();
      } catch (error) {
        failure = { error };
      }
    }
    if (!isBusy(failure.error) || Date.now() >= deadline) throw failure.error;
    failure = undefined;
    await recover?.().catch((problem) => {
      if (!isBusy(problem)) throw problem;
    });
    const delay = Math.min(200, 2 ** attempt) * (0.5 + Math.random());
    await new Promise((resolve) => setTimeout(resolve, delay));
  }
}

/**
 * Wraps an I/O failure as `storage_failure`, keeping FloretErrors as they are.
 *
 * @param error what the client threw
 * @param action what the store was doing, for the message
 * @returns the error to throw
 */
export function storageFailure(error: unknown, action: string): FloretError {
  if (error instanceof FloretError) return error;
  const { message } = describe(error);
  return new FloretError("storage_failure", `Store ${action} failed: ${message || String(error)}`, {
    cause: error,
  });
}
