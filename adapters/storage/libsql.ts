/**
 * A {@link KvStore} on libSQL: a local SQLite file, a Turso database, or any
 * libSQL server over `http(s)://` or `libsql://`, plus the operator's tools
 * ({@link backupLibsql}, {@link maintainLibsql}). Import it
 * from `@floret/engine/libsql` so the core never loads `@libsql/client`.
 *
 * @module
 */

import type { Client } from "@libsql/client";
import { FloretError } from "@floret/engine/spi";
import type { KvStore } from "@floret/engine/spi";
import { clientStore } from "./libsql_client_store.ts";
import { localStore } from "./libsql_local_store.ts";

export { backupLibsql, maintainLibsql } from "./libsql_maintenance.ts";
export type { LibsqlBackupOptions, LibsqlMaintainOptions } from "./libsql_maintenance.ts";

/** Tuning shared by both ways of opening a {@link libsqlStore}. */
export interface LibsqlTuning {
  /**
   * SQLite `synchronous` level for local files (always in WAL mode). Default
   * `"full"`: a commit that returned survives power loss, which the journal's
   * "nothing lost" promise needs. `"normal"` is faster but may lose the last
   * commits (never corrupt the file) on power loss or OS crash.
   */
  synchronous?: "normal" | "full" | undefined;
  /**
   * How long one local statement waits inside SQLite for another process's
   * lock, in ms (default 250). The native driver blocks the thread while it
   * waits, so this stays short; beyond it the store retries asynchronously
   * with jittered backoff for up to 30 s.
   */
  busyTimeoutMs?: number | undefined;
}

/**
 * A `@libsql/client` Client, as {@link libsqlStore} takes it: the methods the
 * store calls, which every Client has. Spelled out here rather than imported,
 * so our published types and docs do not depend on the driver's own.
 */
export interface LibsqlClient {
  /** Runs one statement. */
  execute(...args: never[]): Promise<unknown>;
  /** Runs statements in one transaction. */
  batch(...args: never[]): Promise<unknown>;
  /** Closes the client (the store never calls it on a client it was given). */
  close(): void;
}

/**
 * Options of {@link libsqlStore}: a URL to open (`file:`, `:memory:`,
 * `http(s):`, `libsql:`, `ws(s):`), or a client the caller owns. A shared
 * local client gets WAL mode and the pragmas applied, and is reconnected
 * after SQLITE_BUSY (see {@link libsqlStore}); give the store its own URL when
 * other code uses the client concurrently.
 */
export type LibsqlStoreOptions =
  | (LibsqlTuning & { url: string; authToken?: string | undefined })
  | (LibsqlTuning & { client: LibsqlClient });

const SCHEMES = new Set(["file:", "http:", "https:", "libsql:", "ws:", "wss:"]);

function validate(options: LibsqlStoreOptions): Required<LibsqlTuning> {
  const bad = (detail: string): FloretError =>
    new FloretError("invalid_input", `Invalid libsqlStore options: ${detail}`);
  if (options === null || typeof options !== "object") throw bad("expected an object");
  if ("client" in options) {
    const client = options.client as Partial<Client> | null;
    if (typeof client?.batch !== "function" || typeof client.execute !== "function") {
      throw bad("client is not a libSQL client");
    }
  } else {
    const url: unknown = options.url;
    const scheme = typeof url === "string" ? url.slice(0, url.indexOf(":") + 1) : "";
    if (url !== ":memory:" && !SCHEMES.has(scheme)) {
      throw bad(
        `url must be :memory: or start with file:, http(s):, libsql: or ws(s):, got ${String(url)}`,
      );
    }
    if (options.authToken !== undefined && typeof options.authToken !== "string") {
      throw bad("authToken must be a string");
    }
  }
  const synchronous = options.synchronous ?? "full";
  if (synchronous !== "normal" && synchronous !== "full") {
    throw bad("synchronous must be normal or full");
  }
  const busyTimeoutMs = options.busyTimeoutMs ?? 250;
  if (!Number.isFinite(busyTimeoutMs) || busyTimeoutMs < 0) throw bad("busyTimeoutMs must be >= 0");
  return { synchronous, busyTimeoutMs };
}

/**
 * Opens a store on libSQL. Nothing happens until the first call: the
 * connection is opened then, and the schema is prepared once.
 *
 * A local `file:` (or `:memory:`) URL gets one native connection with
 * prepared statements, and group commit: commits that arrive together share
 * one write transaction (and one fsync), each with its own version checks, so
 * one commit's failed check fails only that commit. Remote URLs and shared
 * clients keep one `client.batch` per commit — one round trip to a remote
 * server — so no transaction stays open across a network wait.
 *
 * @param options `{ url, authToken? }` to let the store own its connection, or
 *   `{ client }` to share one (the store then never closes it); plus tuning
 * @returns the store
 * @throws {FloretError} `invalid_input` for malformed options (before any I/O)
 * @example
 * ```ts ignore
 * import { libsqlStore } from "@floret/engine/libsql";
 * const store = libsqlStore({ url: "file:floret.db" });
 * await store.commit({ set: [{ key: ["hello"], value: new Uint8Array([1]) }] });
 * await store.close();
 * ```
 */
export function libsqlStore(options: LibsqlStoreOptions): KvStore {
  const tuning = validate(options);
  if (!("client" in options) && /^(file:|:memory:$)/.test(options.url)) {
    return localStore(options.url, tuning);
  }
  // Any Client fits LibsqlClient; the store works with the driver's full type.
  return clientStore(
    "client" in options ? { client: options.client as unknown as Client } : options,
    tuning,
  );
}

// The engine types this entry's functions take and return, re-exported so its
// documentation is complete on its own (deno doc --lint, JSR).
export type * from "./store_types.ts";
