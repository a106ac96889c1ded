/**
 * Operator tools for a libSQL store: a consistent backup copy (of a local
 * file or a remote server) and the reclaiming of free pages of a local file.
 * On the source file both run only statements that finish inside `exec`, so
 * no connection of theirs outlives the call.
 *
 * @module
 */

import { closeSync, existsSync, openSync, readSync, rmSync } from "node:fs";
import type Database from "libsql";
import { FloretError } from "@floret/engine/spi";
import { localPath } from "./libsql_native.ts";
import { loadDriver } from "./libsql_peers.ts";
import { copyRemoteStore } from "./libsql_remote_copy.ts";
import { isBusy, storageFailure } from "./libsql_statements.ts";

/** Where {@link backupLibsql} reads from. */
export interface LibsqlBackupOptions {
  /** The store's URL: `file:`, or a server's `http(s):`, `libsql:` or `ws(s):` URL. */
  url: string;
  /** The server's token (remote URLs only). */
  authToken?: string | undefined;
}

const REMOTE = /^(https?|libsql|wss?):/;

/** Which database {@link maintainLibsql} works on. */
export interface LibsqlMaintainOptions {
  /** The store's `file:` URL. */
  url: string;
}

function invalid(detail: string): FloretError {
  return new FloretError("invalid_input", detail);
}

// Both tools need a file: a remote server keeps its own storage, and an
// in-memory database has nothing to back up or reclaim. A missing file would
// silently become a new empty database, so that is refused too.
async function existingFile(options: { url: string } | null, tool: string): Promise<string> {
  if (options === null || typeof options !== "object" || typeof options.url !== "string") {
    throw invalid(`Invalid ${tool} options: expected { url: string }`);
  }
  if (!options.url.startsWith("file:")) {
    throw invalid(`Invalid ${tool} options: url must be a file: URL here, got ${options.url}`);
  }
  const path = await localPath(options.url);
  if (path.startsWith("file:")) throw invalid(`Invalid ${tool} options: in-memory database`);
  if (!existsSync(path)) throw invalid(`No database at ${options.url}`);
  return path;
}

// Text of an SQL string literal: VACUUM INTO takes its file name as an expression.
function sqlString(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

/**
 * Writes a consistent copy of a store to a new local file that
 * `libsqlStore({ url: "file:<copy>" })` opens like the original. For a local
 * file, `VACUUM INTO` reads one snapshot, committed WAL records included; for
 * a server, the rows are read page by page inside one read transaction. Works
 * while hosts have the database open (their idle connections and even
 * concurrent commits do not disturb the snapshot).
 *
 * @param options `{ url, authToken? }` of the store
 * @param destinationPath where the copy goes; must not exist yet
 * @returns when the copy is complete on disk
 * @throws {FloretError} `invalid_input` when the destination exists (it is left
 *   untouched), the URL is in-memory, or there is no local database;
 *   `storage_failure` when the copy fails (the partial copy is removed)
 * @example
 * ```ts ignore
 * import { backupLibsql } from "@floret/engine/libsql";
 * await backupLibsql({ url: "file:floret.db" }, "backups/floret-2026-12-01.db");
 * ```
 */
export async function backupLibsql(
  options: LibsqlBackupOptions,
  destinationPath: string,
): Promise<void> {
  const remote = typeof options?.url === "string" && REMOTE.test(options.url);
  if (remote && options.authToken !== undefined && typeof options.authToken !== "string") {
    throw invalid("Invalid backupLibsql options: authToken must be a string");
  }
  const source = remote ? options.url : await existingFile(options, "backupLibsql");
  claim(destinationPath);
  try {
    if (remote) await copyRemoteStore(options, destinationPath);
    else vacuumInto(await openDriver(source), destinationPath);
  } catch (error) {
    rmSync(destinationPath, { force: true });
    throw storageFailure(error, "backup");
  }
}

// Claims the name atomically: "wx" fails when anything is already there, and
// both copy paths accept the empty file this leaves.
function claim(destinationPath: string): void {
  if (typeof destinationPath !== "string" || destinationPath === "") {
    throw invalid("Invalid backupLibsql destination: expected a file path");
  }
  try {
    closeSync(openSync(destinationPath, "wx"));
  } catch (error) {
    if ((error as { code?: unknown }).code === "EEXIST") {
      throw invalid(`Backup destination exists: ${destinationPath}`);
    }
    throw storageFailure(error, "backup");
  }
}

async function openDriver(path: string): Promise<Database.Database> {
  const Driver = await loadDriver();
  return new Driver(path);
}

function vacuumInto(db: Database.Database, destinationPath: string): void {
  try {
    db.exec("PRAGMA busy_timeout = 1000");
    db.exec(`VACUUM INTO ${sqlString(destinationPath)}`);
  } finally {
    db.close();
  }
}

// The database header's "total freelist pages" (big-endian, offset 36). Read
// from the file because every statement that returns rows would need a
// prepared statement, and the driver keeps a connection open until its
// statements are garbage-collected.
function freelistPages(path: string): number {
  const header = new Uint8Array(100);
  const fd = openSync(path, "r");
  try {
    readSync(fd, header, 0, 100, 0);
  } finally {
    closeSync(fd);
  }
  return new DataView(header.buffer).getUint32(36);
}

/**
 * Reclaims the free pages of a local store file (`PRAGMA incremental_vacuum`)
 * and checkpoints its WAL into the main file. Stores created by this version
 * use incremental auto-vacuum; an older file keeps the mode it was created
 * with, and on one without auto-vacuum nothing is freed (`freedPages: 0`).
 *
 * It refuses while any connection has the database open — a host in this
 * process or in another one, even an idle one — because it leaves WAL mode
 * for the duration, which SQLite allows only to the sole connection. (A store
 * closed in this process can count as open until its statements are
 * garbage-collected.)
 *
 * @param options `{ url }` of the store (a `file:` URL)
 * @returns the number of pages returned to the file system
 * @throws {FloretError} `storage_failure` while the database is open
 *   elsewhere (retry once the hosts are closed), or on I/O failure;
 *   `invalid_input` when the URL is not a local file or there is no database
 * @example
 * ```ts ignore
 * import { maintainLibsql } from "@floret/engine/libsql";
 * const { freedPages } = await maintainLibsql({ url: "file:floret.db" });
 * ```
 */
export async function maintainLibsql(
  options: LibsqlMaintainOptions,
): Promise<{ freedPages: number }> {
  const path = await existingFile(options, "maintainLibsql");
  return reclaim(await openDriver(path), path, options.url);
}

// Synchronous from the lock to the last pragma: nothing else of this process
// runs in between.
function reclaim(db: Database.Database, path: string, url: string): { freedPages: number } {
  let leftWal = false;
  try {
    db.exec("PRAGMA busy_timeout = 0");
    try {
      // Leaving WAL mode needs an exclusive lock, which every other open
      // connection blocks (each holds a shared lock while open, idle or not).
      // Leaving also checkpoints the whole WAL into the main file.
      db.exec("PRAGMA journal_mode = DELETE");
      leftWal = true;
      db.exec("BEGIN EXCLUSIVE");
      db.exec("COMMIT");
    } catch (error) {
      if (!isBusy(error)) throw error;
      throw new FloretError(
        "storage_failure",
        `Database is in use: close every host on ${url} before maintenance`,
        { cause: error },
      );
    }
    const before = freelistPages(path);
    db.exec("PRAGMA incremental_vacuum");
    const after = freelistPages(path);
    return { freedPages: Math.max(0, before - after) };
  } catch (error) {
    throw storageFailure(error, "maintenance");
  } finally {
    try {
      if (leftWal) db.exec("PRAGMA journal_mode = WAL");
    } finally {
      db.close();
    }
  }
}
