/**
 * Per-step engine overhead with a zero-latency scripted model: the workload of
 * the peers' `WORKLOAD.md` (shared docs, `bench/peers/`) for Floret, run by a
 * copy of the peers' own harness (`bench/lib/harness.mjs`) so the `RESULT`
 * line has their exact format and the same phases and verification.
 *
 * One conversation = `threads.create` + `threads.send` + `threads.waitForIdle`.
 * The model is a stateless gateway that reads only the last message; the one
 * `add` tool validates `{a, b}` with zod and returns the number `a + b`.
 *
 * Variants: `memory` (memoryStore), `libsql` (libsqlStore on a WAL file in
 * /tmp, adapter default `synchronous=FULL`), `libsql-normal` (the same with
 * `synchronous=NORMAL`, LangGraph SqliteSaver's setting), `postgres`
 * (postgresStore on a fresh database of the server `FLORET_POSTGRES_URL`
 * names; bench/postgres_side_by_side.sh starts a durable one).
 *
 * Run: `npx tsx bench/overhead.ts --variant memory|libsql|libsql-normal|postgres
 * --mode seq|conc --n N [--convs C]` (env WARMUP, RUNS, STEADY_STEPS).
 *
 * @module
 */
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type KvStore, memoryStore, openHost } from "@floret/engine";
import { libsqlStore } from "@floret/engine/libsql";
import { postgresStore } from "@floret/engine/postgres";
import postgres from "postgres";
import { type ConversationResult, pkgVersion, runBench } from "./lib/harness.mjs";
import { USER_PROMPT } from "./lib/script.mjs";
import { counterAgent, summarize } from "./lib/workload.ts";

const PERSISTED = "per conversation: a create commit (thread record, updated-index row, request " +
  "record) and an admission commit (thread record, index row, active marker, turn_started entry, " +
  "request record); then per step 2 commits, each one entry appended under a check of the thread " +
  "record's version (the record is not rewritten): (1) the step entry (assistant tool call, usage), " +
  "(2) the tool_results entry, about 0.74 KB of keys and values per step, constant with history " +
  "(bench/journal_growth.ts); finally the last step entry + turn_ended + record + index rows. " +
  "Append-only: no history is copied per step";

/** The engine's own version, from the repository's package.json. */
function engineVersion(): string {
  const url = new URL("../package.json", import.meta.url);
  return String((JSON.parse(readFileSync(url, "utf8")) as { version?: unknown }).version);
}

/** A fresh database on the server FLORET_POSTGRES_URL names, dropped by `drop`. */
async function benchDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const admin = process.env.FLORET_POSTGRES_URL;
  if (!admin) throw new Error("the postgres variant needs FLORET_POSTGRES_URL");
  const name = `floret_bench_${process.pid}`;
  const sql = postgres(admin, { max: 1, onnotice: () => {} });
  await sql.unsafe(`DROP DATABASE IF EXISTS ${name}`);
  await sql.unsafe(`CREATE DATABASE ${name}`);
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      await sql.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await sql.end();
    },
  };
}

/** A store for a variant, plus what to say about it and how to clean up. */
async function openStore(
  variant: string,
): Promise<
  {
    store: KvStore;
    info: string;
    cleanup(): Promise<Record<string, unknown>> | Record<string, unknown>;
  }
> {
  if (variant === "postgres") {
    const database = await benchDatabase();
    return {
      store: postgresStore({ url: database.url, maxConnections: 20 }),
      info: `postgresStore (20 connections) on a fresh database of a local PostgreSQL server ` +
        `(the server's defaults: fsync on, synchronous_commit on), one floret_kv_commit call per ` +
        `commit; ${PERSISTED}`,
      cleanup: async () => {
        await database.drop();
        return {};
      },
    };
  }
  if (variant === "memory") {
    return {
      store: memoryStore(),
      info: `memoryStore (in process, all threads kept); ${PERSISTED}`,
      cleanup: () => ({}),
    };
  }
  if (variant === "libsql" || variant === "libsql-normal") {
    const synchronous = variant === "libsql" ? "full" : "normal";
    const dir = mkdtempSync(join(tmpdir(), "floret-overhead-"));
    const file = join(dir, "bench.db");
    return {
      store: libsqlStore({ url: `file:${file}`, synchronous }),
      info: `libsqlStore on a local file in ${tmpdir()}, journal_mode=WAL, synchronous=` +
        `${synchronous.toUpperCase()} (${
          synchronous === "full"
            ? "adapter default: fsync of the WAL on every transaction"
            : "no fsync per transaction"
        }), group commit: commits that arrive together share one transaction, each with its ` +
        `own checks (and a savepoint when it writes more than one row), prepared statements ` +
        `reused, versions from blocks reserved in the counter row; ${PERSISTED}`,
      cleanup: () => {
        const size = (path: string): number => {
          try {
            return statSync(path).size;
          } catch {
            return 0;
          }
        };
        const facts = { dbBytes: size(file), walBytes: size(`${file}-wal`) };
        rmSync(dir, { recursive: true, force: true });
        return facts;
      },
    };
  }
  throw new Error(`unknown variant ${variant} (memory, libsql, libsql-normal, postgres)`);
}

await runBench(
  "floret",
  {
    "@floret/engine": engineVersion(),
    zod: pkgVersion("zod"),
    "@libsql/client": pkgVersion("@libsql/client"),
    postgres: pkgVersion("postgres"),
  },
  async ({ variant, N }) => {
    const { store, info, cleanup } = await openStore(variant);
    const host = await openHost({ store });
    const threads = host.threads({ agent: counterAgent("counter", N) });
    return {
      info,
      async runConversation(convId: string): Promise<ConversationResult> {
        const { threadId } = await threads.create({ requestKey: `${convId}:create` });
        await threads.send({
          threadId,
          requestKey: `${convId}:send`,
          input: { text: USER_PROMPT },
        });
        return summarize(await threads.waitForIdle(threadId));
      },
      async teardown(): Promise<Record<string, unknown>> {
        await host.shutdown();
        await store.close();
        return cleanup();
      },
    };
  },
);
