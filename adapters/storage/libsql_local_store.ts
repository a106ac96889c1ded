/**
 * The libSQL store on a local file it opens itself: one native connection
 * with prepared statements, reads run directly on it, and commits go through
 * a {@link GroupCommitter} so concurrent callers share one transaction and
 * one fsync.
 *
 * @module
 */

import { decodeKey, FloretError, planCommit, planGet, planScan } from "@floret/engine/spi";
import type {
  KvCommit,
  KvCommitResult,
  KvEntry,
  KvKey,
  KvListOptions,
  KvSelector,
  KvStore,
} from "@floret/engine/spi";
import { DEFAULT_GROUP_LIMITS, GroupCommitter } from "./libsql_group_commit.ts";
import { localPath, NativeConnection } from "./libsql_native.ts";
import { applyPragmas, type PragmaSettings, prepareSchema } from "./libsql_schema.ts";
import { isBusy, retryBusy, storageFailure } from "./libsql_statements.ts";

/**
 * Under `synchronous=NORMAL`, how many groups in a row may start without a
 * loop turn after a group of one (see {@link GroupCommitter}).
 */
const LONE_RUN = 32;

/**
 * Opens the local store. Nothing touches the file until the first call.
 *
 * @param url a `file:` URL or `:memory:`; a malformed one fails the first call
 *   with `invalid_input`
 * @param settings pragmas for the connection
 * @returns the store
 */
export function localStore(url: string, settings: PragmaSettings): KvStore {
  let connection: NativeConnection | undefined;
  let ready: Promise<NativeConnection> | undefined;
  let closed = false;
  // Whether `ready` resolved: the schema is prepared and `connection` is usable.
  let opened = false;

  // The new connection becomes current only once its pragmas hold, so no
  // operation ever runs without the busy timeout or the synchronous level.
  const fresh = async (): Promise<NativeConnection> => {
    const opened = await NativeConnection.open(await localPath(url));
    try {
      await applyPragmas(opened, settings);
    } catch (error) {
      opened.close();
      throw error;
    }
    connection?.close();
    connection = opened;
    return opened;
  };

  // After SQLITE_BUSY a failed statement may keep its read snapshot, and
  // every later write on that connection would fail with
  // SQLITE_BUSY_SNAPSHOT; a fresh connection is the way out.
  // (Also while close() drains: it closes the connection only afterwards.)
  const recover = async (): Promise<void> => {
    if (connection) await fresh();
  };
  const current = (): NativeConnection => {
    if (!connection) throw new FloretError("storage_failure", "Store is closed: libsqlStore");
    return connection;
  };
  const attempt = <T>(work: (db: NativeConnection) => T, failed?: { error: unknown }): Promise<T> =>
    retryBusy(() => Promise.resolve().then(() => work(current())), recover, failed);

  const connect = (): Promise<NativeConnection> => {
    if (closed) {
      return Promise.reject(new FloretError("storage_failure", "Store is closed: libsqlStore"));
    }
    ready ??= retryBusy(fresh)
      .then(() => attempt((db) => prepareSchema(db)))
      .then(() => {
        opened = true;
        return current();
      })
      .catch((error) => {
        ready = undefined; // let a later call try again after a transient failure
        opened = false;
        connection?.close();
        connection = undefined;
        throw storageFailure(error, "open");
      });
    return ready;
  };

  // A group runs synchronously on the current connection, so it settles on
  // the turn it ran; only after SQLITE_BUSY (nothing of it landed) does it go
  // through recovery and the asynchronous retries of `attempt`.
  const committer = new GroupCommitter((plans) => {
    try {
      return current().runGroup(plans);
    } catch (error) {
      if (!isBusy(error)) throw error;
      return attempt((db) => db.runGroup(plans), { error });
    }
  }, {
    ...DEFAULT_GROUP_LIMITS,
    // With synchronous=FULL every transaction waits for an fsync, which
    // concurrent writers share only when their commits meet in one group:
    // worth a loop turn per group. With NORMAL a lone commit costs about
    // 20 us of CPU and a loop turn a good part of that again, so a
    // sequential writer's commits start without one (bounded, see
    // GroupLimits.loneRun).
    loneRun: settings.synchronous === "normal" ? LONE_RUN : 0,
  });

  // Calls made before close() still complete: close waits for them.
  const inFlight = new Set<Promise<unknown>>();
  const track = <T>(work: Promise<T>): Promise<T> => {
    inFlight.add(work);
    const done = () => inFlight.delete(work);
    work.then(done, done);
    return work;
  };

  return {
    getMany(keys: readonly KvKey[]): Promise<(KvEntry | null)[]> {
      return track(getMany(keys));
    },

    list(selector: KvSelector, listOptions?: KvListOptions): Promise<KvEntry[]> {
      return track(list(selector, listOptions));
    },

    commit(op: KvCommit): Promise<KvCommitResult> {
      // Once open, a commit goes straight to the committer, whose drain()
      // close() awaits; only a commit that still waits for the connection is
      // tracked here.
      if (connection && opened && !closed) {
        try {
          return committer.submit(planCommit(op));
        } catch (error) {
          return Promise.reject(error);
        }
      }
      return track(commit(op));
    },

    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      await Promise.allSettled([...inFlight]);
      await committer.drain();
      connection?.close();
      connection = undefined;
    },
  };

  async function getMany(keys: readonly KvKey[]): Promise<(KvEntry | null)[]> {
    const encoded = planGet(keys);
    if (encoded.length === 0) return [];
    await connect();
    try {
      const rows = await attempt((db) => db.getMany(encoded));
      return encoded.map((key, i) => {
        const row = rows[i];
        return row ? { key: decodeKey(key), value: row.value, version: row.version } : null;
      });
    } catch (error) {
      throw storageFailure(error, "read");
    }
  }

  async function list(selector: KvSelector, listOptions?: KvListOptions): Promise<KvEntry[]> {
    const scan = planScan(selector, listOptions);
    await connect();
    if (scan.empty) return [];
    try {
      const rows = await attempt((db) => db.list(scan));
      return rows.map((row) => ({
        key: decodeKey(row.key),
        value: row.value,
        version: row.version,
      }));
    } catch (error) {
      throw storageFailure(error, "list");
    }
  }

  async function commit(op: KvCommit): Promise<KvCommitResult> {
    const plan = planCommit(op);
    await connect();
    return await committer.submit(plan);
  }
}
