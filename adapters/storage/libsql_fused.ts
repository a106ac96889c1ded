/**
 * A commit as one SQL statement: an `INSERT … SELECT` whose `WHERE` holds
 * the commit's version checks and whose rows are its writes. SQLite runs a
 * statement atomically, so the statement writes all of the commit or none of
 * it, and it needs no transaction of its own: a sequential commit becomes one
 * call into the driver instead of four (`BEGIN IMMEDIATE`, the check read,
 * the write, `COMMIT`), and a commit inside a group one call instead of one
 * per check and per write (plus a savepoint's two).
 *
 * The checks are uncorrelated subqueries, so SQLite evaluates each once, and
 * because the statement reads the table it writes, SQLite materializes the
 * selected rows before inserting any: every check sees the table as it was
 * before the statement, even when the commit writes a key it checks.
 *
 * A guarded statement also requires the counter row to still hold the end of
 * the connection's version block (see libsql_versions.ts): outside a
 * transaction it is the only way to know, atomically with the write, that
 * nobody reserved versions since.
 *
 * @module
 */

import type { CommitPlan } from "@floret/engine/spi";

/** Most checks, and most writes, of a commit that runs as one statement. */
export const FUSED_MAX = 8;

/**
 * Whether a commit can run as one statement: it sets one to
 * {@link FUSED_MAX} keys, deletes none (a delete of a missing key changes no
 * row, so the count of changed rows would no longer tell whether the checks
 * held), and has at most {@link FUSED_MAX} checks.
 *
 * @param plan a validated commit
 * @returns true when {@link fusedSql} covers it
 */
export function fusable(plan: CommitPlan): boolean {
  const writes = plan.writes;
  if (writes.length === 0 || writes.length > FUSED_MAX || plan.checks.length > FUSED_MAX) {
    return false;
  }
  for (const write of writes) if (write.value === null) return false;
  return true;
}

/**
 * A small number naming the statement shape, for a per-connection cache.
 *
 * @param plan a commit for which {@link fusable} holds
 * @param guarded whether the statement also checks the counter row
 * @returns a distinct index per (checks, writes, guarded)
 */
export function fusedShape(plan: CommitPlan, guarded: boolean): number {
  return ((plan.checks.length * (FUSED_MAX + 1) + plan.writes.length) << 1) | (guarded ? 1 : 0);
}

/**
 * The statement for a shape. Parameters, in order: the version, each write's
 * key and value, the counter's expected value (guarded only), each check's
 * key and expected version. It changes exactly `writes` rows when every
 * condition held, and none otherwise.
 *
 * @param checks how many checks
 * @param writes how many writes (at least one)
 * @param guarded whether the counter row must hold a given value
 * @returns the SQL text
 */
export function fusedSql(checks: number, writes: number, guarded: boolean): string {
  const rows = Array.from({ length: writes }, () => "(?, ?)").join(", ");
  const conditions: string[] = [];
  if (guarded) conditions.push("(SELECT value FROM floret_meta WHERE name = 'version') = ?");
  for (let i = 0; i < checks; i++) {
    // `IS` treats a missing row (NULL) and an expected NULL as equal.
    conditions.push("(SELECT version FROM kv WHERE key = ?) IS ?");
  }
  // An upsert's SELECT needs a WHERE clause (SQLite's parser otherwise reads
  // ON CONFLICT as a join constraint), hence `true` when there is no condition.
  const where = conditions.length > 0 ? conditions.join(" AND ") : "true";
  return `INSERT INTO kv (key, value, version)
    SELECT column1, column2, ? FROM (VALUES ${rows}) WHERE ${where}
    ON CONFLICT (key) DO UPDATE SET value = excluded.value, version = excluded.version`;
}

/**
 * The parameters of {@link fusedSql} for one commit.
 *
 * @param plan a commit for which {@link fusable} holds
 * @param version the version its writes get
 * @param counter the counter value a guarded statement requires, or
 *   undefined for an unguarded one
 * @returns the parameters in statement order
 */
export function fusedArgs(
  plan: CommitPlan,
  version: string,
  counter: bigint | undefined,
): unknown[] {
  const args: unknown[] = [version];
  for (const write of plan.writes) args.push(write.key, write.value);
  if (counter !== undefined) args.push(counter);
  for (const check of plan.checks) args.push(check.key, check.version);
  return args;
}
