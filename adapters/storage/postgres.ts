/**
 * A {@link KvStore} on PostgreSQL, through the `postgres` (postgres.js)
 * driver, an optional peer. Import it from `@floret/engine/postgres` so the
 * core never loads the driver. Several hosts may share one database: every
 * commit checks its versions and writes in one transaction on the server.
 *
 * @module
 */

import type { Options, Sql } from "postgres";
import { FloretError, optionalPeer } from "@floret/engine/spi";
import type { KvStore } from "@floret/engine/spi";
import { sqlStore } from "./postgres_store.ts";

export { SCHEMA_VERSION as POSTGRES_SCHEMA_VERSION } from "./postgres_schema.ts";

/**
 * A postgres.js client (`postgres(url)`), as {@link postgresStore} takes it:
 * a tagged-template function with `unsafe` and `begin`, which every client
 * has. Spelled out here rather than imported, so our published types and docs
 * do not depend on the driver's own.
 */
export interface PostgresClient {
  /** The tagged template that runs a query. */
  (...args: never[]): unknown;
  /** Runs a query given as text and parameters. */
  unsafe(...args: never[]): unknown;
  /** Runs a callback in a transaction. */
  begin(...args: never[]): unknown;
}

/**
 * Options of {@link postgresStore}: a connection URL the store opens (and
 * closes), or a postgres.js client the caller owns (the store never ends it).
 */
export type PostgresStoreOptions =
  | {
    /** `postgres://user:password@host:port/database` (or `postgresql://`). */
    url: string;
    /** Most connections the store's pool opens (default 10). */
    maxConnections?: number | undefined;
  }
  | {
    /** A postgres.js client; the store uses its pool and leaves it open at close. */
    sql: PostgresClient;
  };

const loadDriver: () => Promise<typeof import("postgres")> = optionalPeer({
  package: "postgres",
  entry: "@floret/engine/postgres",
  load: () => import("postgres"),
});

function invalid(detail: string): FloretError {
  return new FloretError("invalid_input", `Invalid postgresStore options: ${detail}`);
}

function validate(options: PostgresStoreOptions): void {
  if (options === null || typeof options !== "object") throw invalid("expected an object");
  if ("sql" in options) {
    if (typeof options.sql !== "function" || typeof options.sql.unsafe !== "function") {
      throw invalid("sql is not a postgres.js client");
    }
    return;
  }
  const url: unknown = options.url;
  if (typeof url !== "string" || !/^postgres(ql)?:\/\//.test(url)) {
    throw invalid("url must start with postgres:// or postgresql://");
  }
  const max = options.maxConnections;
  if (max !== undefined && (!Number.isInteger(max) || max < 1 || max > 1000)) {
    throw invalid("maxConnections must be an integer from 1 to 1000");
  }
}

/**
 * Opens a store on PostgreSQL. Nothing happens until the first call: then
 * the connection pool opens and the schema is created or upgraded once (one
 * table `floret_kv`, a sequence and a function; see the docs page on stores).
 *
 * @param options `{ url, maxConnections? }` to let the store own its pool, or
 *   `{ sql }` to share a postgres.js client
 * @returns the store
 * @throws {FloretError} `invalid_input` for malformed options (before any I/O)
 * @example
 * ```ts ignore
 * import { postgresStore } from "@floret/engine/postgres";
 * const store = postgresStore({ url: "postgres://floret@127.0.0.1:5432/floret" });
 * await store.commit({ set: [{ key: ["hello"], value: new Uint8Array([1]) }] });
 * await store.close();
 * ```
 */
export function postgresStore(options: PostgresStoreOptions): KvStore {
  validate(options);
  if ("sql" in options) {
    // Any postgres.js client fits PostgresClient; the store works with its full type.
    const shared = options.sql as unknown as Sql;
    // A postgres.js client says its pool size; a look-alike may not.
    const max = (shared as { options?: { max?: unknown } }).options?.max;
    return sqlStore(
      () => Promise.resolve(shared),
      () => Promise.resolve(),
      typeof max === "number" ? max : undefined,
    );
  }
  const { url, maxConnections } = options;
  let owned: Sql | undefined;
  const max = maxConnections ?? 10;
  const driverOptions: Options<Record<string, never>> = {
    max,
    onnotice: () => {}, // "relation already exists" notices from CREATE ... IF NOT EXISTS
  };
  return sqlStore(
    async () => {
      const { default: postgres } = await loadDriver();
      owned ??= postgres(url, driverOptions);
      return owned;
    },
    async () => {
      await owned?.end({ timeout: 5 });
    },
    max,
  );
}

// The engine types this entry's functions take and return, re-exported so its
// documentation is complete on its own (deno doc --lint, JSR).
export type * from "./store_types.ts";
