/**
 * The PostgreSQL store's schema: one table `floret_kv` (key, value, version),
 * a sequence that numbers commits, the function that applies one commit
 * inside the server and (version 2) the one that applies a group of them. The store creates and upgrades it on first use, under an
 * advisory lock so that several hosts starting at once do not race on DDL.
 *
 * Why a function: a commit's checks must see what every commit before it
 * wrote, and its writes must land before any later commit reads them. Inside
 * a PL/pgSQL function under READ COMMITTED every statement takes a fresh
 * snapshot, so after the function has locked the commit's keys its checks see
 * the latest committed state, and the whole commit is one round trip.
 *
 * @module
 */

import { FloretError } from "@floret/engine/spi";

/** The physical schema version this code writes and reads. */
export const SCHEMA_VERSION = 2;

/**
 * The advisory-lock class of this store (the first argument of the two-key
 * form), so Floret's locks never meet an application's single-key locks.
 * The second key is a hash of the locked row key; 0 guards schema changes.
 */
export const LOCK_CLASS = 0x464c5254; // "FLRT"

/**
 * Meta rows live in the same table under keys that start with 0x00, which no
 * encoded key can start with (every encoded part starts with a type tag in
 * 0x01..0x31); every read of user keys stays at or above 0x01.
 */
export const SCHEMA_KEY = "\\x00736368656d61"; // 0x00 "schema", as a bytea literal

/** The smallest key a user entry can have (see {@link SCHEMA_KEY}). */
export const FIRST_USER_KEY: Uint8Array = new Uint8Array([0x01]);

// One step per schema version: MIGRATIONS[n] upgrades version n to n + 1.
// Every statement is idempotent, so a step interrupted before its version
// bump simply runs again. Both functions lock in ascending hash order, the
// group function all of its keys up front: every transaction takes its locks
// in one global order, so commits and groups never deadlock each other.
const MIGRATIONS: readonly (readonly string[])[] = [
  [
    `CREATE SEQUENCE IF NOT EXISTS floret_kv_version`,
    `CREATE OR REPLACE FUNCTION floret_kv_commit(
       check_keys bytea[], check_versions bigint[], set_keys bytea[], set_values bytea[],
       delete_keys bytea[]
     ) RETURNS bigint LANGUAGE plpgsql AS $$
     DECLARE
       committed bigint;
     BEGIN
       -- Lock every key the commit reads or writes, in one order, so two
       -- commits on the same keys run one after the other and never deadlock.
       PERFORM pg_advisory_xact_lock(${LOCK_CLASS}, h)
         FROM (SELECT DISTINCT hashtext(encode(k, 'base64')) AS h
                 FROM unnest(check_keys || set_keys || delete_keys) AS k
                ORDER BY 1) AS locks;
       IF EXISTS (
         SELECT 1 FROM unnest(check_keys, check_versions) AS c(k, expected)
           LEFT JOIN floret_kv AS kv ON kv.key = c.k
          WHERE kv.version IS DISTINCT FROM c.expected
       ) THEN
         RETURN NULL;
       END IF;
       committed := nextval('floret_kv_version');
       DELETE FROM floret_kv WHERE key = ANY (delete_keys);
       INSERT INTO floret_kv (key, value, version)
         SELECT k, v, committed FROM unnest(set_keys, set_values) AS s(k, v)
         ON CONFLICT (key) DO UPDATE SET value = excluded.value, version = excluded.version;
       RETURN committed;
     END $$`,
  ],
  [
    // Applies commits one after another, in order, in one transaction: each
    // is checked against what the ones before it wrote, and one whose check
    // fails is skipped (NULL in its slot) without touching the others. Each
    // commit's part of the flat arrays ends at its *_ends entry (1-based).
    `CREATE OR REPLACE FUNCTION floret_kv_commit_many(
       check_ends int[], check_keys bytea[], check_versions bigint[],
       set_ends int[], set_keys bytea[], set_values bytea[],
       delete_ends int[], delete_keys bytea[]
     ) RETURNS bigint[] LANGUAGE plpgsql AS $$
     DECLARE
       results bigint[] := '{}';
       committed bigint;
       c0 int := 0; s0 int := 0; d0 int := 0;
       c1 int; s1 int; d1 int;
     BEGIN
       PERFORM pg_advisory_xact_lock(${LOCK_CLASS}, h)
         FROM (SELECT DISTINCT hashtext(encode(k, 'base64')) AS h
                 FROM unnest(check_keys || set_keys || delete_keys) AS k
                ORDER BY 1) AS locks;
       FOR i IN 1 .. coalesce(cardinality(check_ends), 0) LOOP
         c1 := check_ends[i]; s1 := set_ends[i]; d1 := delete_ends[i];
         IF EXISTS (
           SELECT 1 FROM unnest(check_keys[c0 + 1 : c1], check_versions[c0 + 1 : c1])
                    AS c(k, expected)
             LEFT JOIN floret_kv AS kv ON kv.key = c.k
            WHERE kv.version IS DISTINCT FROM c.expected
         ) THEN
           results := array_append(results, NULL::bigint);
         ELSE
           committed := nextval('floret_kv_version');
           IF d1 > d0 THEN
             DELETE FROM floret_kv WHERE key = ANY (delete_keys[d0 + 1 : d1]);
           END IF;
           IF s1 > s0 THEN
             INSERT INTO floret_kv (key, value, version)
               SELECT k, v, committed
                 FROM unnest(set_keys[s0 + 1 : s1], set_values[s0 + 1 : s1]) AS s(k, v)
               ON CONFLICT (key) DO UPDATE SET value = excluded.value, version = excluded.version;
           END IF;
           results := array_append(results, committed);
         END IF;
         c0 := c1; s0 := s1; d0 := d1;
       END LOOP;
       RETURN results;
     END $$`,
  ],
];

/** What the schema code needs from a connection: one statement at a time. */
export interface SchemaSession {
  /** Runs one statement (no parameters) and returns its rows. */
  run(statement: string): Promise<Record<string, unknown>[]>;
}

/**
 * Creates the schema or upgrades it to {@link SCHEMA_VERSION}, in one
 * transaction under the schema lock.
 *
 * @param begin runs its callback in one transaction
 * @throws {FloretError} `store_too_new` when the database was written by a newer engine
 */
export async function prepareSchema(
  begin: (work: (session: SchemaSession) => Promise<void>) => Promise<void>,
): Promise<void> {
  await begin(async (session) => {
    await session.run(`SELECT pg_advisory_xact_lock(${LOCK_CLASS}, 0)`);
    await session.run(
      `CREATE TABLE IF NOT EXISTS floret_kv (
         key bytea PRIMARY KEY, value bytea NOT NULL, version bigint NOT NULL)`,
    );
    const rows = await session.run(
      `SELECT convert_from(value, 'UTF8') AS schema FROM floret_kv WHERE key = '${SCHEMA_KEY}'`,
    );
    let schema = rows.length === 0 ? 0 : Number(rows[0].schema);
    if (!Number.isInteger(schema) || schema < 0) {
      throw new FloretError("storage_failure", `Store schema is unreadable: ${rows[0]?.schema}`);
    }
    if (schema > SCHEMA_VERSION) {
      throw new FloretError(
        "store_too_new",
        `Store schema is newer than this engine: ${schema} > ${SCHEMA_VERSION}`,
      );
    }
    for (; schema < SCHEMA_VERSION; schema++) {
      for (const statement of MIGRATIONS[schema]) await session.run(statement);
      await session.run(
        `INSERT INTO floret_kv (key, value, version)
           VALUES ('${SCHEMA_KEY}', convert_to('${schema + 1}', 'UTF8'), 0)
           ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
      );
    }
  });
}
