/**
 * The physical schema of the libSQL store and its one-time preparation:
 * connection pragmas, the meta row with the schema version, the `kv` table,
 * and the check view whose trigger makes a failed version check abort the
 * commit batch it sits in.
 *
 * @module
 */

import type { InStatement } from "@libsql/client";
import { FloretError } from "@floret/engine/spi";

/**
 * The part of a libSQL connection the schema code needs. A `Client` is one;
 * the store's own native connection offers the same shape, so the schema and
 * its migrations exist once for both.
 */
export interface SqlSession {
  /** `"file"` for local databases; the pragmas apply only there. */
  readonly protocol: string;
  /** Runs one statement outside any explicit transaction. */
  execute(statement: InStatement): Promise<{ rows: ArrayLike<unknown>[] }>;
  /** Runs statements in one write transaction: all of them or none. */
  batch(statements: InStatement[], mode: "write"): Promise<{ rows: ArrayLike<unknown>[] }[]>;
}

/** The physical schema version this code writes and reads. */
export const SCHEMA_VERSION = 1;

/**
 * The message of the RAISE a failed check produces. Commits map exactly this
 * failure to `{ ok: false }`.
 */
export const CHECK_FAILED = "floret_check_failed";

/** How the store prepares connections to a local file database. */
export interface PragmaSettings {
  /** SQLite `synchronous` level for WAL mode. */
  synchronous: "normal" | "full";
  /** How long a connection waits for another writer's lock, in milliseconds. */
  busyTimeoutMs: number;
}

// `floret_meta` is the one object every future schema keeps, so reading it
// first is safe on any version; nothing else is touched until the version is
// known to be ours.
const META_STATEMENTS = [
  "CREATE TABLE IF NOT EXISTS floret_meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID",
  "INSERT OR IGNORE INTO floret_meta (name, value) VALUES ('schema', 0), ('version', 0)",
  "SELECT value FROM floret_meta WHERE name = 'schema'",
];

// One step per schema version: MIGRATIONS[n] upgrades version n to n + 1.
// Every statement is idempotent so a step interrupted before its version bump
// can simply run again.
const MIGRATIONS: readonly (readonly string[])[] = [
  [
    // A rowid table with a unique key, not WITHOUT ROWID: the latter is an
    // index B-tree whose interior cells hold whole rows (~400 bytes for a step's
    // entry, fanout ~10), and each step's insert, which lands between full
    // pages, rebalanced three leaves and their parent every second commit. Here
    // rows append at the table's right edge and only the key index rebalances
    // (a step commit writes 2.8 WAL pages instead of 3.1; conc 200x5 about
    // -10 % per step, seq N=10 unchanged: bench/README.md, round 10 wal10).
    // Stores made before keep their WITHOUT ROWID table: every statement of the
    // store reads and writes both alike (`key` is unique and not null in both).
    "CREATE TABLE IF NOT EXISTS kv (key BLOB NOT NULL UNIQUE, value BLOB NOT NULL, version TEXT NOT NULL)",
    // Inserting into this view never stores anything: its trigger only aborts
    // the surrounding batch when the key's current version differs. `IS NOT`
    // treats a missing row (NULL) and an expected NULL as equal.
    "CREATE VIEW IF NOT EXISTS floret_check AS SELECT NULL AS key, NULL AS version WHERE 0",
    `CREATE TRIGGER IF NOT EXISTS floret_check_insert INSTEAD OF INSERT ON floret_check BEGIN
       SELECT RAISE(ABORT, '${CHECK_FAILED}')
       WHERE (SELECT version FROM kv WHERE key = NEW.key) IS NOT NEW.version;
     END`,
  ],
];

/**
 * Sets WAL mode and the connection pragmas on a local file database, and
 * gives a brand-new database incremental auto-vacuum. Remote servers manage
 * their own durability and space, so this does nothing for them.
 *
 * @param client the libSQL client or native session
 * @param settings the synchronous level and busy timeout
 * @returns when the pragmas are applied
 */
export async function applyPragmas(client: SqlSession, settings: PragmaSettings): Promise<void> {
  if (client.protocol !== "file") return;
  // busy_timeout first: switching to WAL needs a lock another process may hold.
  await client.execute(`PRAGMA busy_timeout = ${Math.floor(settings.busyTimeoutMs)}`);
  // auto_vacuum takes effect only while the file has no table yet, and only
  // before WAL mode is set. On an older database the pragma would merely
  // linger as a pending setting for some later full VACUUM, so such a file
  // keeps the mode it was created with.
  const tables = await client.execute("SELECT count(*) FROM sqlite_schema");
  if (Number(tables.rows[0]?.[0]) === 0) {
    await client.execute("PRAGMA auto_vacuum = INCREMENTAL");
  }
  await client.execute("PRAGMA journal_mode = WAL");
  await client.execute(
    `PRAGMA synchronous = ${settings.synchronous === "full" ? "FULL" : "NORMAL"}`,
  );
}

function schemaOf(value: unknown): number {
  const schema = Number(value);
  if (!Number.isInteger(schema) || schema < 0) {
    throw new FloretError("storage_failure", `Store schema is unreadable: ${String(value)}`);
  }
  return schema;
}

/**
 * Brings the schema up to {@link SCHEMA_VERSION}, one migration step per
 * version, each in its own write batch.
 *
 * @param client the libSQL client or native session
 * @returns when the schema is current
 * @throws {FloretError} `store_too_new` when the store was written by a newer schema
 */
export async function prepareSchema(client: SqlSession): Promise<void> {
  const results = await client.batch(META_STATEMENTS, "write");
  let schema = schemaOf(results[2].rows[0]?.[0]);
  if (schema > SCHEMA_VERSION) {
    throw new FloretError(
      "store_too_new",
      `Store schema is newer than this engine: ${schema} > ${SCHEMA_VERSION}`,
    );
  }
  while (schema < SCHEMA_VERSION) {
    await client.batch(
      [
        ...MIGRATIONS[schema],
        {
          sql: "UPDATE floret_meta SET value = ? WHERE name = 'schema' AND value = ?",
          args: [schema + 1, schema],
        },
      ],
      "write",
    );
    schema += 1;
  }
}
