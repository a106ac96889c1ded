/**
 * The PostgreSQL store over a `postgres` (postgres.js) client. Reads are
 * plain SELECTs on the one table. A commit is one call of a schema function
 * (postgres_commits.ts): one round trip that locks the commit's keys, runs its
 * checks, takes the next version from the sequence and writes. Commits that
 * arrive while several are already on their way go together, as one call
 * that applies each on its own (postgres_group_commit.ts).
 *
 * @module
 */

import type { Sql } from "postgres";
import {
  bytesToMapKey,
  compareBytes,
  decodeKey,
  FloretError,
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
import { commitSender, type StoredVersion, versionOf } from "./postgres_commits.ts";
import { storageFailure } from "./postgres_errors.ts";
import { CommitLanes, DEFAULT_GROUP_LIMITS } from "./postgres_group_commit.ts";
import { FIRST_USER_KEY, prepareSchema } from "./postgres_schema.ts";

type Row = { key: Uint8Array; value: Uint8Array; version: StoredVersion };

const GET_SQL = "SELECT key, value, version FROM floret_kv WHERE key = ANY ($1::bytea[])";
const LIST_SQL = (order: "ASC" | "DESC", limited: boolean) =>
  "SELECT key, value, version FROM floret_kv WHERE key >= $1::bytea AND key < $2::bytea " +
  `ORDER BY key ${order}${limited ? " LIMIT $3::bigint" : ""}`;

// The open client and the group commit on it.
type Client = { sql: Sql; lanes: CommitLanes };

// postgres.js hands bytea back as a Buffer on Node; the SPI promises plain
// Uint8Arrays the caller owns.
const own = (bytes: Uint8Array): Uint8Array => new Uint8Array(bytes);

/**
 * A store on a postgres.js client.
 *
 * @param connect returns the client, creating it on first use
 * @param release ends the client when the store owns it
 * @param poolSize the client's most connections, when known: commit calls
 *   in flight never outnumber them
 * @returns the store
 */
export function sqlStore(
  connect: () => Promise<Sql>,
  release: () => Promise<void>,
  poolSize?: number,
): KvStore {
  let ready: Promise<Client> | undefined;
  let closed = false;
  const limits = {
    ...DEFAULT_GROUP_LIMITS,
    lanes: Math.max(1, Math.min(DEFAULT_GROUP_LIMITS.lanes, poolSize ?? Infinity)),
  };

  const open = async (): Promise<Client> => {
    const sql = await connect();
    await prepareSchema((work) =>
      sql.begin((tx) => work({ run: (statement) => tx.unsafe(statement) }))
        .then(() => undefined)
    );
    return { sql, lanes: new CommitLanes(commitSender(sql), limits) };
  };
  const client = (): Promise<Client> => {
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
      const { sql } = await client();
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
      const { sql } = await client();
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
      const { lanes } = await client();
      return lanes.submit(plan);
    },

    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      await release();
    },
  };
}
