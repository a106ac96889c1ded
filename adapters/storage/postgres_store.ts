/**
 * The PostgreSQL store over a `postgres` (postgres.js) client. Reads are
 * plain SELECTs on the one table; a commit is one call of the schema's
 * `floret_kv_commit` function: one round trip that locks the commit's keys,
 * runs its checks, takes the next version from the sequence and writes.
 * Commits on different keys run at the same time on the client's pool, and
 * PostgreSQL flushes their WAL records together, so concurrent threads share
 * fsyncs without any grouping of our own.
 *
 * @module
 */

import type { Sql } from "postgres";
import {
  bytesToMapKey,
  compareBytes,
  decodeKey,
  FloretError,
  formatVersion,
  planCommit,
  planGet,
  planScan,
} from "@floret/engine/spi";
import type {
  KvCommit,
  KvCommitResult,
  KvEntry,
  KvKey,
  KvListOptions,
  KvSelector,
  KvStore,
} from "@floret/engine/spi";
import { FIRST_USER_KEY, prepareSchema } from "./postgres_schema.ts";

type Row = { key: Uint8Array; value: Uint8Array; version: string | number | bigint };

const COMMIT_SQL = "SELECT floret_kv_commit($1::bytea[], $2::bigint[], $3::bytea[], " +
  "$4::bytea[], $5::bytea[]) AS version";
const GET_SQL = "SELECT key, value, version FROM floret_kv WHERE key = ANY ($1::bytea[])";
const LIST_SQL = (order: "ASC" | "DESC", limited: boolean) =>
  "SELECT key, value, version FROM floret_kv WHERE key >= $1::bytea AND key < $2::bytea " +
  `ORDER BY key ${order}${limited ? " LIMIT $3::bigint" : ""}`;

// A stored version as the SPI's fixed-width string.
const versionOf = (value: Row["version"]): string => formatVersion(BigInt(value));

// Expected versions as the function's bigint[]: a string that no commit of
// this store can have written (another store's version, garbage) becomes -1,
// which never matches, so the check fails instead of the statement.
const MAX_BIGINT = 2n ** 63n - 1n;
const expected = (version: string | null): string | null => {
  if (version === null) return null;
  if (!/^\d{1,20}$/.test(version)) return "-1";
  const counter = BigInt(version);
  return counter <= MAX_BIGINT ? String(counter) : "-1";
};

// postgres.js hands bytea back as a Buffer on Node; the SPI promises plain
// Uint8Arrays the caller owns.
const own = (bytes: Uint8Array): Uint8Array => new Uint8Array(bytes);

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
 * A store on a postgres.js client.
 *
 * @param connect returns the client, creating it on first use
 * @param release ends the client when the store owns it
 * @returns the store
 */
export function sqlStore(connect: () => Promise<Sql>, release: () => Promise<void>): KvStore {
  let ready: Promise<Sql> | undefined;
  let closed = false;

  const open = async (): Promise<Sql> => {
    const sql = await connect();
    await prepareSchema((work) =>
      sql.begin((tx) => work({ run: (statement) => tx.unsafe(statement) }))
        .then(() => undefined)
    );
    return sql;
  };
  const client = (): Promise<Sql> => {
    if (closed) {
      return Promise.reject(new FloretError("storage_failure", "Store is closed: postgresStore"));
    }
    ready ??= open().catch((error) => {
      ready = undefined; // a later call tries again after a transient failure
      throw storageFailure(error, "open");
    });
    return ready;
  };

  return {
    async getMany(keys: readonly KvKey[]): Promise<(KvEntry | null)[]> {
      const encoded = planGet(keys);
      if (encoded.length === 0) return [];
      const sql = await client();
      let rows: Row[];
      try {
        rows = await sql.unsafe<Row[]>(GET_SQL, [encoded as never]);
      } catch (error) {
        throw storageFailure(error, "read");
      }
      const found = new Map<string, Row>();
      for (const row of rows) found.set(bytesToMapKey(row.key), row);
      // Each caller slot gets its own copy, even for repeated keys.
      return encoded.map((bytes) => {
        const hit = found.get(bytesToMapKey(bytes));
        return hit
          ? { key: decodeKey(bytes), value: own(hit.value), version: versionOf(hit.version) }
          : null;
      });
    },

    async list(selector: KvSelector, options?: KvListOptions): Promise<KvEntry[]> {
      const scan = planScan(selector, options);
      const sql = await client();
      if (scan.empty) return [];
      // Meta rows sit below every user key; a scan from the empty key skips them.
      const lower = compareBytes(scan.lower, FIRST_USER_KEY) < 0 ? FIRST_USER_KEY : scan.lower;
      const limited = Number.isFinite(scan.limit);
      const params: unknown[] = [lower, scan.upper];
      if (limited) params.push(scan.limit);
      try {
        const rows = await sql.unsafe<Row[]>(
          LIST_SQL(scan.reverse ? "DESC" : "ASC", limited),
          params as never[],
        );
        return rows.map((row) => ({
          key: decodeKey(own(row.key)),
          value: own(row.value),
          version: versionOf(row.version),
        }));
      } catch (error) {
        throw storageFailure(error, "list");
      }
    },

    async commit(op: KvCommit): Promise<KvCommitResult> {
      const plan = planCommit(op);
      const sql = await client();
      const sets = plan.writes.filter((write) => write.value !== null);
      const params = [
        plan.checks.map((check) => check.key),
        plan.checks.map((check) => expected(check.version)),
        sets.map((write) => write.key),
        sets.map((write) => write.value as Uint8Array),
        plan.writes.filter((write) => write.value === null).map((write) => write.key),
      ];
      try {
        const [row] = await sql.unsafe<{ version: string | null }[]>(COMMIT_SQL, params as never[]);
        if (row?.version === null || row?.version === undefined) return { ok: false };
        return { ok: true, version: versionOf(row.version) };
      } catch (error) {
        throw storageFailure(error, "commit");
      }
    },

    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      await release();
    },
  };
}
