// A test-only libSQL server: enough of Hrana 2 over HTTP (the JSON
// `v2/pipeline` endpoint that @libsql/client uses for http:// URLs) to run
// the store's remote path without sqld. Each database lives in a local file,
// opened with the native `libsql` driver, and every pipeline request runs to
// completion before the next one on the same database starts, like one
// sqld connection per stream. It counts HTTP requests so tests can assert
// round trips, and keeps a log of pipelines that only read (with the blob
// arguments they read) so a test can tell a commit from a look.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { AddressInfo } from "node:net";
import { Buffer } from "node:buffer";
import Database from "libsql";

type Value =
  | { type: "null" }
  | { type: "integer"; value: string }
  | { type: "float"; value: number }
  | { type: "text"; value: string }
  | { type: "blob"; base64: string };
interface Stmt {
  sql?: string;
  sql_id?: number;
  args?: Value[];
  named_args?: { name: string; value: Value }[];
  want_rows?: boolean;
}
type Cond =
  | { type: "ok" | "error"; step: number }
  | { type: "not"; cond: Cond }
  | { type: "and" | "or"; conds: Cond[] }
  | { type: "is_autocommit" };
interface StreamRequest {
  type: string;
  stmt?: Stmt;
  batch?: { steps: { condition?: Cond; stmt: Stmt }[] };
  sql?: string;
  sql_id?: number;
}
type Db = InstanceType<typeof Database>;

/** A running test server. */
export interface HranaServer {
  /** HTTP requests received so far. */
  readonly requests: number;
  /** Pipeline requests that changed a database or held a transaction open. */
  readonly writes: number;
  /** Per pipeline request that only read, the blob arguments it read (in order received). */
  readonly reads: readonly Uint8Array[][];
  /** A URL for a fresh, empty database on this server. */
  newDatabaseUrl(): string;
  /** Stops the server and closes every database. */
  close(): Promise<void>;
}

function toArg(value: Value): unknown {
  switch (value.type) {
    case "null":
      return null;
    case "integer":
      return BigInt(value.value);
    case "float":
    case "text":
      return value.value;
    case "blob":
      return Buffer.from(value.base64, "base64");
  }
}

function toValue(value: unknown): Value {
  if (value === null || value === undefined) return { type: "null" };
  if (typeof value === "bigint") return { type: "integer", value: String(value) };
  if (typeof value === "number") return { type: "float", value };
  if (typeof value === "string") return { type: "text", value };
  if (value instanceof Uint8Array) {
    return { type: "blob", base64: Buffer.from(value).toString("base64") };
  }
  if (value instanceof ArrayBuffer) {
    return { type: "blob", base64: Buffer.from(value).toString("base64") };
  }
  throw new Error(`unsupported value ${typeof value}`);
}

class Stream {
  sqls = new Map<number, string>();
  /** Whether the request being handled ran anything but a reading statement. */
  wrote = false;
  /** Blob arguments of the reading statements of the request being handled. */
  blobs: Uint8Array[] = [];
  constructor(readonly db: Db) {}

  execute(stmt: Stmt): unknown {
    const sql = stmt.sql ?? this.sqls.get(stmt.sql_id ?? -1);
    if (sql === undefined) throw new Error("SQL text not found");
    const args = (stmt.args ?? []).map(toArg);
    const blobs = args.filter((arg): arg is Uint8Array => arg instanceof Uint8Array);
    if (stmt.named_args?.length) {
      throw new Error("named arguments are not supported by the test server");
    }
    const prepared = this.db.prepare(sql);
    prepared.safeIntegers(true);
    let reader = true;
    try {
      prepared.raw(true); // throws for statements that return no data
    } catch {
      reader = false;
    }
    if (reader) {
      // The native driver wants columns read before rows and arguments as one array.
      const cols = prepared.columns().map((col: { name: string; type: string | null }) => ({
        name: col.name,
        decltype: col.type,
      }));
      const rows = prepared.all(args) as unknown[][];
      this.blobs.push(...blobs);
      return {
        cols,
        rows: stmt.want_rows === false ? [] : rows.map((row) => row.map(toValue)),
        affected_row_count: 0,
        last_insert_rowid: null,
      };
    }
    this.wrote = true;
    const info = prepared.run(args) as { changes: number; lastInsertRowid: number | bigint };
    return {
      cols: [],
      rows: [],
      affected_row_count: info.changes,
      last_insert_rowid: String(info.lastInsertRowid),
    };
  }

  batch(steps: { condition?: Cond; stmt: Stmt }[]): unknown {
    const results: unknown[] = [];
    const errors: unknown[] = [];
    const holds = (cond: Cond): boolean => {
      switch (cond.type) {
        case "ok":
          return results[cond.step] != null;
        case "error":
          return errors[cond.step] != null;
        case "not":
          return !holds(cond.cond);
        case "and":
          return cond.conds.every(holds);
        case "or":
          return cond.conds.some(holds);
        case "is_autocommit":
          return !this.db.inTransaction;
      }
    };
    steps.forEach((step, i) => {
      results[i] = null;
      errors[i] = null;
      if (step.condition && !holds(step.condition)) return;
      try {
        results[i] = this.execute(step.stmt);
      } catch (error) {
        errors[i] = failure(error);
      }
    });
    return { step_results: results, step_errors: errors };
  }

  handle(request: StreamRequest): unknown {
    switch (request.type) {
      case "execute":
        return { type: "execute", result: this.execute(request.stmt as Stmt) };
      case "batch":
        return { type: "batch", result: this.batch(request.batch?.steps ?? []) };
      case "sequence":
        this.wrote = true;
        this.db.exec(request.sql ?? this.sqls.get(request.sql_id ?? -1) ?? "");
        return { type: "sequence" };
      case "store_sql":
        this.sqls.set(request.sql_id as number, request.sql as string);
        return { type: "store_sql" };
      case "close_sql":
        this.sqls.delete(request.sql_id as number);
        return { type: "close_sql" };
      case "get_autocommit":
        return { type: "get_autocommit", is_autocommit: !this.db.inTransaction };
      case "close":
        return { type: "close" };
      default:
        throw new Error(`unsupported request ${request.type}`);
    }
  }
}

function failure(error: unknown): { message: string; code?: string } {
  const { message, code } = error as { message?: string; code?: string };
  return { message: String(message ?? error), code };
}

async function body(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/**
 * Starts the server on 127.0.0.1 at an ephemeral port.
 *
 * @param dir where database files go (created if missing)
 * @returns the running server
 */
export async function startHranaServer(dir: string): Promise<HranaServer> {
  mkdirSync(dir, { recursive: true });
  const databases = new Map<string, { db: Db; queue: Promise<unknown> }>();
  const streams = new Map<string, Stream>();
  let requests = 0;
  let writes = 0;
  const reads: Uint8Array[][] = [];
  let batons = 0;

  const pipeline = (name: string, text: string): Promise<unknown> => {
    const database = databases.get(name);
    if (!database) return Promise.reject(new Error(`unknown database ${name}`));
    const run = database.queue.then(() => {
      const input = JSON.parse(text) as { baton?: string | null; requests: StreamRequest[] };
      let stream = input.baton ? streams.get(input.baton) : new Stream(database.db);
      if (!stream) throw new Error("unknown baton");
      if (input.baton) streams.delete(input.baton);
      let open = true;
      stream.wrote = false;
      stream.blobs = [];
      const results = input.requests.map((req) => {
        if (req.type === "close") open = false;
        try {
          return { type: "ok", response: (stream as Stream).handle(req) };
        } catch (error) {
          return { type: "error", error: failure(error) };
        }
      });
      // A pipeline that leaves a transaction open holds its database: it counts as a write.
      if (stream.wrote || stream.db.inTransaction) writes += 1;
      else if (stream.blobs.length > 0) reads.push(stream.blobs);
      let baton: string | null = null;
      if (open) streams.set(baton = `baton-${++batons}`, stream);
      else stream = undefined;
      return { baton, base_url: null, results };
    });
    database.queue = run.catch(() => undefined);
    return run;
  };

  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    requests += 1;
    const match = /^\/([a-z0-9]+)\/(v2|v3)(\/pipeline)?$/.exec(request.url ?? "");
    const reply = (status: number, payload: unknown): void => {
      response.writeHead(status, { "content-type": "application/json" }).end(
        JSON.stringify(payload),
      );
    };
    if (!match || match[2] !== "v2") return reply(404, { message: "not found" });
    if (!match[3]) return reply(200, {});
    body(request)
      .then((text) => pipeline(match[1], text))
      .then((payload) => reply(200, payload), (error) => reply(400, failure(error)));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  return {
    get requests() {
      return requests;
    },
    get writes() {
      return writes;
    },
    reads,
    newDatabaseUrl() {
      const name = `db${databases.size + 1}`;
      databases.set(name, { db: new Database(join(dir, `${name}.db`)), queue: Promise.resolve() });
      return `http://127.0.0.1:${port}/${name}/`;
    },
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        (server as { closeAllConnections?: () => void }).closeAllConnections?.();
      });
      for (const { db } of databases.values()) db.close();
    },
  };
}
