/**
 * The PostgreSQL server the Postgres tests use: the one `FLORET_POSTGRES_URL`
 * names (the gate starts a throwaway cluster and sets it; locally run
 * `node scripts/postgres_server.mjs start`). Without it those tests skip and
 * say why. Each test gets a database of its own.
 */
import postgres from "postgres";

/** The admin URL, or undefined when no server is configured. */
export const POSTGRES_URL: string | undefined =
  (globalThis as { process?: { env: Record<string, string | undefined> } }).process?.env
    .FLORET_POSTGRES_URL || undefined;

/** The reason the Postgres tests skip, or false when a server is there. */
export const NO_POSTGRES: string | false = POSTGRES_URL
  ? false
  : "no PostgreSQL server: set FLORET_POSTGRES_URL (npm test starts one when PostgreSQL is installed)";

let counter = 0;

/**
 * Creates an empty database and returns its URL.
 *
 * @param label part of the database name, to find it when debugging
 */
export async function freshDatabase(label = "t"): Promise<string> {
  if (!POSTGRES_URL) throw new Error(NO_POSTGRES as string);
  const name = `floret_${label}_${Date.now().toString(36)}_${(++counter).toString(36)}_${
    Math.floor(Math.random() * 1e6).toString(36)
  }`.toLowerCase().replace(/[^a-z0-9_]/g, "_");
  const admin = postgres(POSTGRES_URL, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end({ timeout: 5 });
  }
  const url = new URL(POSTGRES_URL);
  url.pathname = `/${name}`;
  return url.toString();
}
