/**
 * One native connection to a local libSQL file, through the `libsql` driver
 * that `@libsql/client` itself uses for `file:` URLs. Going to the driver
 * directly lets the store prepare each statement once per connection (the
 * client prepares every statement again on every call) and run a group of
 * commits in one transaction: each commit as one statement where it fits
 * (libsql_fused.ts), otherwise a commit of several writes in its own savepoint.
 *
 * @module
 */

import type Database from "libsql";
import type { InStatement } from "@libsql/client";
import { FloretError, formatVersion } from "@floret/engine/spi";
import type { CommitPlan, KvScan } from "@floret/engine/spi";
import { fusable, fusedArgs, fusedShape, fusedSql } from "./libsql_fused.ts";
import type { GroupOutcome } from "./libsql_group_commit.ts";
import type { SqlSession } from "./libsql_schema.ts";
import { loadClient, loadConfig, loadDriver } from "./libsql_peers.ts";
import { isBusy } from "./libsql_statements.ts";
import { VersionBlocks, type VersionLease } from "./libsql_versions.ts";

type Connection = InstanceType<typeof Database>;
type Statement = Database.Statement;

/** A stored row as the store reads it: encoded key, value bytes, version. */
export interface NativeRow {
  /** Encoded key. */
  key: Uint8Array;
  /** Value bytes (a private copy). */
  value: Uint8Array;
  /** Version string. */
  version: string;
}

/**
 * The path the driver opens for a `file:` (or `:memory:`) URL, parsed exactly
 * as `@libsql/client` parses it.
 *
 * @param url a `file:` URL or `:memory:`
 * @returns the driver path (once `@libsql/core` is loaded)
 * @throws {FloretError} `invalid_input` for a URL the client would refuse
 */
export async function localPath(url: string): Promise<string> {
  // The driver and the URL parser come with @libsql/client: a host without it
  // is told to install that one package.
  await loadClient();
  const { expandConfig, isInMemoryConfig } = await loadConfig();
  try {
    const config = expandConfig({ url }, true);
    if (config.scheme !== "file") throw new Error(`not a file URL: ${url}`);
    const host = config.authority?.host.toLowerCase() ?? "";
    if ((host !== "" && host !== "localhost") || config.authority?.port !== undefined) {
      throw new Error("a file URL names no host; use file:/absolute/path or file:relative/path");
    }
    return isInMemoryConfig(config) ? `file:${config.path}` : config.path;
  } catch (error) {
    throw new FloretError(
      "invalid_input",
      `Invalid libSQL file URL: ${(error as Error).message ?? String(error)}`,
      { cause: error },
    );
  }
}

// The driver returns BLOBs as Buffers; callers get plain Uint8Arrays so they
// compare equal to what they stored. A Buffer that owns its whole memory is
// wrapped without a copy.
function plainBytes(value: unknown): Uint8Array {
  if (!(value instanceof Uint8Array)) {
    throw new FloretError(
      "storage_failure",
      `Store row is corrupt: expected a blob, got ${typeof value}`,
    );
  }
  const whole = value.byteOffset === 0 && value.byteLength === value.buffer.byteLength;
  return whole ? new Uint8Array(value.buffer as ArrayBuffer) : new Uint8Array(value);
}

// Commits open and close their transaction with `exec(SQL.begin)` and
// `exec(SQL.commit)`: the driver's `run` builds a result object per call that
// costs more (about 0.6 us per statement, measured) than SQLite parsing the
// keywords again.
const SQL = {
  begin: "BEGIN IMMEDIATE",
  beginRead: "BEGIN DEFERRED",
  commit: "COMMIT",
  rollback: "ROLLBACK",
  savepoint: "SAVEPOINT floret_commit",
  release: "RELEASE floret_commit",
  rollbackTo: "ROLLBACK TO floret_commit",
  counter: "SELECT value FROM floret_meta WHERE name = 'version'",
  // A lone commit's first check and the counter in one statement: one call
  // into the driver fewer per commit.
  checkWithCounter: `SELECT (SELECT version FROM kv WHERE key = ?),
    (SELECT value FROM floret_meta WHERE name = 'version')`,
  setCounter: "UPDATE floret_meta SET value = ? WHERE name = 'version'",
  version: "SELECT version FROM kv WHERE key = ?",
  get: "SELECT value, version FROM kv WHERE key = ?",
  upsert: `INSERT INTO kv (key, value, version) VALUES (?, ?, ?)
    ON CONFLICT (key) DO UPDATE SET value = excluded.value, version = excluded.version`,
  delete: "DELETE FROM kv WHERE key = ?",
  listAsc: "SELECT key, value, version FROM kv WHERE key >= ? AND key < ? ORDER BY key ASC LIMIT ?",
  listDesc:
    "SELECT key, value, version FROM kv WHERE key >= ? AND key < ? ORDER BY key DESC LIMIT ?",
} as const;

type Prepared = Record<keyof typeof SQL, Statement>;

/**
 * A native connection with its prepared statements. Every method is
 * synchronous underneath, so a group of commits runs start to finish without
 * any other JavaScript in between.
 */
export class NativeConnection implements SqlSession {
  /** Always `"file"`: pragmas apply. */
  readonly protocol = "file";
  readonly #db: Connection;
  #prepared: Prepared | undefined;
  // One-statement commits (libsql_fused.ts), prepared per shape on first use.
  #fused = new Map<number, Statement>();
  readonly #versions = new VersionBlocks();
  readonly #readCounter = (): bigint => BigInt((this.#statements().counter.get() as [bigint])[0]);
  readonly #writeCounter = (last: bigint): void => {
    this.#statements().setCounter.run([last]);
  };

  /** Use {@link NativeConnection.open}. */
  private constructor(db: Connection) {
    this.#db = db;
  }

  /**
   * Opens a driver connection (loading the driver on first use).
   *
   * @param path a path from {@link localPath}
   * @returns the connection
   */
  static async open(path: string): Promise<NativeConnection> {
    await loadClient();
    const Driver = await loadDriver();
    return new NativeConnection(new Driver(path));
  }

  // Prepared on first use, after the schema exists.
  #statements(): Prepared {
    if (this.#prepared) return this.#prepared;
    const prepared = {} as Prepared;
    for (const name of Object.keys(SQL) as (keyof typeof SQL)[]) {
      prepared[name] = this.#db.prepare(SQL[name]);
    }
    for (const reader of ["version", "get", "listAsc", "listDesc"] as const) {
      prepared[reader].raw(true);
    }
    prepared.counter.raw(true).safeIntegers(true);
    prepared.checkWithCounter.raw(true).safeIntegers(true);
    this.#prepared = prepared;
    return prepared;
  }

  #fusedStatement(plan: CommitPlan, guarded: boolean): Statement {
    const shape = fusedShape(plan, guarded);
    let statement = this.#fused.get(shape);
    if (statement === undefined) {
      statement = this.#db.prepare(fusedSql(plan.checks.length, plan.writes.length, guarded));
      this.#fused.set(shape, statement);
    }
    return statement;
  }

  #runOne(statement: InStatement): { rows: ArrayLike<unknown>[] } {
    const { sql, args } = typeof statement === "string" ? { sql: statement, args: [] } : statement;
    const prepared = this.#db.prepare(sql);
    const bound = Array.isArray(args) ? args : [];
    if (prepared.reader) return { rows: prepared.raw(true).all(bound) as unknown[][] };
    prepared.run(bound);
    return { rows: [] };
  }

  /** Runs one statement (schema setup only; not cached). */
  execute(statement: InStatement): Promise<{ rows: ArrayLike<unknown>[] }> {
    return Promise.resolve().then(() => this.#runOne(statement));
  }

  /** Runs statements in one write transaction (schema setup only). */
  batch(statements: InStatement[], _mode: "write"): Promise<{ rows: ArrayLike<unknown>[] }[]> {
    return Promise.resolve().then(() =>
      this.#transaction("BEGIN IMMEDIATE", () => statements.map((s) => this.#runOne(s)))
    );
  }

  #transaction<T>(begin: string, body: () => T): T {
    this.#db.exec(begin);
    try {
      const result = body();
      this.#db.exec("COMMIT");
      return result;
    } catch (error) {
      if (this.#db.inTransaction) this.#db.exec("ROLLBACK");
      throw error;
    }
  }

  /**
   * Point reads, all from one snapshot.
   *
   * @param keys encoded keys
   * @returns value and version per key, or undefined where absent
   */
  getMany(keys: readonly Uint8Array[]): ({ value: Uint8Array; version: string } | undefined)[] {
    const s = this.#statements();
    const read = () =>
      keys.map((key) => {
        const row = s.get.get([key]) as [unknown, unknown] | undefined;
        return row ? { value: plainBytes(row[0]), version: String(row[1]) } : undefined;
      });
    if (keys.length < 2) return read();
    s.beginRead.run();
    try {
      const rows = read();
      s.commit.run();
      return rows;
    } catch (error) {
      if (this.#db.inTransaction) s.rollback.run();
      throw error;
    }
  }

  /**
   * A range read.
   *
   * @param scan a non-empty plan from planScan
   * @returns the rows in scan order
   */
  list(scan: KvScan): NativeRow[] {
    const s = this.#statements();
    const statement = scan.reverse ? s.listDesc : s.listAsc;
    // SQLite reads a negative LIMIT as "no limit".
    const limit = Number.isFinite(scan.limit) ? scan.limit : -1;
    const rows = statement.all([scan.lower, scan.upper, limit]) as unknown[][];
    return rows.map((row) => ({
      key: plainBytes(row[0]),
      value: plainBytes(row[1]),
      version: String(row[2]),
    }));
  }

  /**
   * Runs a group of commits in one write transaction. Each commit's checks
   * are read inside the transaction, after the commits before it in the
   * group, so they see exactly what a serial order would; a commit whose
   * checks fail writes nothing, and a commit whose writes fail is rolled back
   * alone (to its savepoint, or with its one failed statement). Each landed
   * commit gets its own version.
   *
   * @param plans the group, in arrival order
   * @returns one outcome per plan
   * @throws the driver's error when the transaction itself fails (SQLITE_BUSY
   *   included: then nothing ran and the whole group may be retried)
   */
  runGroup(plans: readonly CommitPlan[]): GroupOutcome[] {
    if (plans.length === 1) return [this.#runAlone(plans[0])];
    const s = this.#statements();
    this.#db.exec(SQL.begin);
    try {
      const lease = this.#lease();
      const outcomes = plans.map((plan): GroupOutcome => {
        // A commit of one write costs less as its check reads plus the
        // write (measured: about 3 us more per commit as one statement);
        // from two writes on, one statement saves the savepoint's two calls.
        if (plan.writes.length > 1 && fusable(plan)) return this.#fusedInGroup(plan, lease);
        if (!checksHold(s, plan)) return { ok: false };
        // Taken before the savepoint: a reservation of versions survives a
        // failed write of this commit.
        const version = formatVersion(lease.peek());
        // A failing statement undoes its own changes and leaves the
        // transaction open, so a commit of one write needs no savepoint
        // (unless the error ended the transaction: then the group fails).
        const savepoint = plan.writes.length > 1;
        if (savepoint) s.savepoint.run();
        try {
          writeAll(s, plan, version);
        } catch (error) {
          if (isBusy(error) || !this.#db.inTransaction) throw error;
          if (savepoint) {
            s.rollbackTo.run();
            s.release.run();
          }
          return { error };
        }
        if (savepoint) s.release.run();
        lease.take();
        return { ok: true, version };
      });
      this.#db.exec(SQL.commit);
      lease.committed();
      return outcomes;
    } catch (error) {
      this.#failed();
      throw error;
    }
  }

  // One commit of a group as one statement: it writes all or nothing by
  // itself, so it needs no savepoint, and a failed write undoes only it
  // (unless the error ended the transaction: then the group fails).
  #fusedInGroup(plan: CommitPlan, lease: VersionLease): GroupOutcome {
    // Taken before the statement: a reservation of versions survives a
    // failed or refused commit.
    const version = formatVersion(lease.peek());
    let changes: number;
    try {
      changes = this.#fusedStatement(plan, false).run(fusedArgs(plan, version, undefined)).changes;
    } catch (error) {
      if (isBusy(error) || !this.#db.inTransaction) throw error;
      return { error };
    }
    if (changes !== plan.writes.length) return { ok: false };
    lease.take();
    return { ok: true, version };
  }

  /**
   * A group of one (every commit of a sequential writer). When the
   * connection holds a version block and the commit fits one statement, that
   * statement is the whole transaction (autocommit), guarded by the counter
   * row; otherwise, or when the statement changed nothing (a check failed,
   * or another writer moved the counter), the commit runs in an explicit
   * transaction, which is also its savepoint, so SAVEPOINT and RELEASE are
   * left out and a failed write rolls the whole transaction back. Same
   * outcomes as {@link runGroup} with one plan.
   */
  #runAlone(plan: CommitPlan): GroupOutcome {
    const held = this.#versions.held();
    if (held !== undefined && fusable(plan)) {
      const version = formatVersion(held.next);
      let changes: number;
      try {
        changes = this.#fusedStatement(plan, true).run(fusedArgs(plan, version, held.last))
          .changes;
      } catch (error) {
        // Busy: nothing ran, and the caller retries. Anything else may have
        // failed while committing, landed or not: the block is given up.
        this.#failed();
        throw error;
      }
      if (changes === plan.writes.length) {
        this.#versions.used();
        return { ok: true, version };
      }
    }
    return this.#runInTransaction(plan);
  }

  #runInTransaction(plan: CommitPlan): GroupOutcome {
    const s = this.#statements();
    this.#db.exec(SQL.begin);
    try {
      let stored: bigint | undefined;
      if (plan.checks.length > 0) {
        const row = s.checkWithCounter.get([plan.checks[0].key]) as [unknown, bigint];
        stored = row[1];
        if (versionOf(row[0]) !== plan.checks[0].version || !checksHold(s, plan, 1)) {
          s.rollback.run();
          return { ok: false };
        }
      }
      const lease = stored === undefined
        ? this.#lease()
        : this.#versions.lease(() => stored, this.#writeCounter);
      const version = formatVersion(lease.peek());
      try {
        writeAll(s, plan, version);
      } catch (error) {
        if (isBusy(error)) throw error;
        s.rollback.run();
        return { error };
      }
      lease.take();
      this.#db.exec(SQL.commit);
      lease.committed();
      return { ok: true, version };
    } catch (error) {
      this.#failed();
      throw error;
    }
  }

  #lease(): VersionLease {
    return this.#versions.lease(this.#readCounter, this.#writeCounter);
  }

  // A transaction that threw may have committed or not (a failed COMMIT):
  // its versions are given up, and the next one reserves a fresh block.
  #failed(): void {
    this.#versions.drop();
    if (this.#db.inTransaction) this.#db.exec("ROLLBACK");
  }

  /** Closes the connection (the driver finishes closing once its statements are collected). */
  close(): void {
    this.#prepared = undefined;
    this.#fused.clear();
    if (this.#db.open) this.#db.close();
  }
}

/** A stored version as checks compare it: null where the key is absent. */
function versionOf(value: unknown): string | null {
  return value === null || value === undefined ? null : String(value);
}

/** Whether the version checks of `plan` from index `from` on hold inside the open transaction. */
function checksHold(s: Prepared, plan: CommitPlan, from = 0): boolean {
  for (let i = from; i < plan.checks.length; i++) {
    const check = plan.checks[i];
    const row = s.version.get([check.key]) as [unknown] | undefined;
    if (versionOf(row?.[0]) !== check.version) return false;
  }
  return true;
}

/** Applies `plan`'s writes under `version` (a null value deletes). */
function writeAll(s: Prepared, plan: CommitPlan, version: string): void {
  for (const write of plan.writes) {
    if (write.value === null) s.delete.run([write.key]);
    else s.upsert.run([write.key, write.value, version]);
  }
}
