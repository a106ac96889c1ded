/**
 * The remote half of `backupLibsql`: a libSQL server's store copied into a
 * new local file. `VACUUM INTO` would write on the server's disk, so the rows
 * are read instead, page by page inside one read transaction (one snapshot),
 * and written into a fresh store file with the same schema.
 *
 * @module
 */

import type { InStatement } from "@libsql/client";
import { FloretError } from "@floret/engine/spi";
import { NativeConnection } from "./libsql_native.ts";
import { loadClient } from "./libsql_peers.ts";
import { prepareSchema, SCHEMA_VERSION } from "./libsql_schema.ts";

/** Rows per read round trip and per local write transaction. */
const PAGE = 500;

const FIRST_PAGE = "SELECT key, value, version FROM kv ORDER BY key LIMIT ?";
const NEXT_PAGE = "SELECT key, value, version FROM kv WHERE key > ? ORDER BY key LIMIT ?";
const INSERT_ROW = "INSERT INTO kv (key, value, version) VALUES (?, ?, ?)";
const SET_META = "INSERT OR REPLACE INTO floret_meta (name, value) VALUES (?, ?)";

function bytesOf(value: unknown): Uint8Array {
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  if (value instanceof Uint8Array) return value;
  throw new FloretError("storage_failure", `Store row is corrupt: expected a blob`);
}

/**
 * Copies a remote store into `destinationPath`, an empty file the caller has
 * claimed. The copy uses a rollback journal, so every page is in the file
 * itself once this resolves.
 *
 * @param options the server's URL and token
 * @param destinationPath the claimed, empty destination file
 * @returns when the copy is complete
 * @throws {FloretError} `store_too_new` when the server's schema is newer than
 *   this engine; `storage_failure` when it is older (open it with a host first)
 */
export async function copyRemoteStore(
  options: { url: string; authToken?: string },
  destinationPath: string,
): Promise<void> {
  const { createClient } = await loadClient();
  const client = createClient({ url: options.url, authToken: options.authToken });
  const target = await NativeConnection.open(destinationPath);
  try {
    const snapshot = await client.transaction("read");
    try {
      const meta = await snapshot.execute("SELECT name, value FROM floret_meta");
      const schema = Number(meta.rows.find((row) => row[0] === "schema")?.[1]);
      if (schema > SCHEMA_VERSION) {
        throw new FloretError(
          "store_too_new",
          `Store schema is newer than this engine: ${schema} > ${SCHEMA_VERSION}`,
        );
      }
      if (schema !== SCHEMA_VERSION) {
        throw new FloretError(
          "storage_failure",
          `Store schema ${schema} is older than this engine's: open it with a host first`,
        );
      }
      // Auto-vacuum must be chosen while the new file has no table.
      await target.execute("PRAGMA auto_vacuum = INCREMENTAL");
      await prepareSchema(target);
      await target.batch(
        meta.rows.map((row): InStatement => ({ sql: SET_META, args: [row[0], row[1]] })),
        "write",
      );
      let last: Uint8Array | undefined;
      for (;;) {
        const page = await snapshot.execute(
          last === undefined
            ? { sql: FIRST_PAGE, args: [PAGE] }
            : { sql: NEXT_PAGE, args: [last, PAGE] },
        );
        if (page.rows.length === 0) break;
        await target.batch(
          page.rows.map((row): InStatement => ({
            sql: INSERT_ROW,
            args: [bytesOf(row[0]), bytesOf(row[1]), String(row[2])],
          })),
          "write",
        );
        last = bytesOf(page.rows[page.rows.length - 1][0]);
        if (page.rows.length < PAGE) break;
      }
    } finally {
      snapshot.close();
    }
  } finally {
    target.close();
    client.close();
  }
}
