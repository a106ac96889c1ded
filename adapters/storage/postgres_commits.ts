/**
 * How the PostgreSQL store sends commits: one commit as one call of
 * `floret_kv_commit`, or a group of commits as one call of
 * `floret_kv_commit_many` (see postgres_schema.ts), each one round trip.
 * A group's checks, sets and deletes travel as flat arrays plus, per commit,
 * where its part of each array ends: PostgreSQL has no arrays of arrays of
 * different lengths, and slicing flat arrays keeps the call one statement.
 *
 * @module
 */

import type { Sql } from "postgres";
import { formatVersion } from "@floret/engine/spi";
import type { CommitPlan, KvCommitResult } from "@floret/engine/spi";
import { rolledBack, storageFailure } from "./postgres_errors.ts";
import type { CommitSender, GroupOutcome } from "./postgres_group_commit.ts";

/** One commit: the function returns its version, or NULL when a check failed. */
export const COMMIT_SQL = "SELECT floret_kv_commit($1::bytea[], $2::bigint[], $3::bytea[], " +
  "$4::bytea[], $5::bytea[]) AS version";

/** A group: the function returns one version (or NULL) per commit, in order. */
export const GROUP_SQL = "SELECT floret_kv_commit_many($1::int[], $2::bytea[], $3::bigint[], " +
  "$4::int[], $5::bytea[], $6::bytea[], $7::int[], $8::bytea[]) AS versions";

/** A version as the server returns it (int8 comes back as a string). */
export type StoredVersion = string | number | bigint;

/**
 * A stored version as the SPI's fixed-width string.
 *
 * @param value the version column or function result
 * @returns the SPI version
 */
export const versionOf = (value: StoredVersion): string => formatVersion(BigInt(value));

// Expected versions as the functions' bigint[]: a string that no commit of
// this store can have written (another store's version, garbage) becomes -1,
// which never matches, so the check fails instead of the statement.
const MAX_BIGINT = 2n ** 63n - 1n;
const expected = (version: string | null): string | null => {
  if (version === null) return null;
  if (!/^\d{1,20}$/.test(version)) return "-1";
  const counter = BigInt(version);
  return counter <= MAX_BIGINT ? String(counter) : "-1";
};

/**
 * The parameters of {@link COMMIT_SQL} for one commit.
 *
 * @param plan a validated commit
 * @returns check keys, expected versions, set keys, set values, delete keys
 */
export function commitParams(plan: CommitPlan): unknown[] {
  const checkKeys: Uint8Array[] = [];
  const checkVersions: (string | null)[] = [];
  const setKeys: Uint8Array[] = [];
  const setValues: Uint8Array[] = [];
  const deleteKeys: Uint8Array[] = [];
  append(plan, checkKeys, checkVersions, setKeys, setValues, deleteKeys);
  return [checkKeys, checkVersions, setKeys, setValues, deleteKeys];
}

/**
 * The parameters of {@link GROUP_SQL} for several commits, in order.
 *
 * @param plans validated commits
 * @returns per array: where each commit's part ends (1-based, inclusive), then the array
 */
export function groupParams(plans: readonly CommitPlan[]): unknown[] {
  const checkEnds: number[] = [];
  const checkKeys: Uint8Array[] = [];
  const checkVersions: (string | null)[] = [];
  const setEnds: number[] = [];
  const setKeys: Uint8Array[] = [];
  const setValues: Uint8Array[] = [];
  const deleteEnds: number[] = [];
  const deleteKeys: Uint8Array[] = [];
  for (const plan of plans) {
    append(plan, checkKeys, checkVersions, setKeys, setValues, deleteKeys);
    checkEnds.push(checkKeys.length);
    setEnds.push(setKeys.length);
    deleteEnds.push(deleteKeys.length);
  }
  return [checkEnds, checkKeys, checkVersions, setEnds, setKeys, setValues, deleteEnds, deleteKeys];
}

function append(
  plan: CommitPlan,
  checkKeys: Uint8Array[],
  checkVersions: (string | null)[],
  setKeys: Uint8Array[],
  setValues: Uint8Array[],
  deleteKeys: Uint8Array[],
): void {
  for (const check of plan.checks) {
    checkKeys.push(check.key);
    checkVersions.push(expected(check.version));
  }
  for (const write of plan.writes) {
    if (write.value === null) deleteKeys.push(write.key);
    else {
      setKeys.push(write.key);
      setValues.push(write.value);
    }
  }
}

/**
 * A commit's result from what the server returned for it.
 *
 * @param version the commit's version, or null / undefined when a check failed
 * @returns the SPI result
 */
export function resultOf(version: StoredVersion | null | undefined): KvCommitResult {
  return version === null || version === undefined
    ? { ok: false }
    : { ok: true, version: versionOf(version) };
}

/**
 * Sends commits on a postgres.js client.
 *
 * @param sql the client (its pool runs the calls)
 * @returns the sender the store's group commit uses
 */
export function commitSender(sql: Sql): CommitSender {
  const one = async (plan: CommitPlan): Promise<KvCommitResult> => {
    try {
      const [row] = await sql.unsafe<{ version: StoredVersion | null }[]>(
        COMMIT_SQL,
        commitParams(plan) as never[],
      );
      return resultOf(row?.version);
    } catch (error) {
      throw storageFailure(error, "commit");
    }
  };
  const alone = (plan: CommitPlan): Promise<GroupOutcome> =>
    one(plan).then((result) => result, (error: unknown) => ({ error }));

  const many = async (plans: readonly CommitPlan[]): Promise<GroupOutcome[]> => {
    let versions: unknown;
    try {
      const [row] = await sql.unsafe<{ versions: unknown }[]>(
        GROUP_SQL,
        groupParams(plans) as never[],
      );
      versions = row?.versions;
    } catch (error) {
      if (!rolledBack(error)) throw storageFailure(error, "commit");
      // The server refused the group and nothing of it landed: one commit's
      // error (a key too large to index, say) must not fail the others, so
      // each runs again alone and gets its own outcome.
      return Promise.all(plans.map(alone));
    }
    if (!Array.isArray(versions) || versions.length !== plans.length) {
      throw storageFailure(new Error("the group's answer has the wrong length"), "commit");
    }
    return versions.map((version) => resultOf(version as StoredVersion | null));
  };
  return { one, many };
}
