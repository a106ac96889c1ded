/**
 * Opens a store from a URL for the crash tests, so the parent and its child
 * agree on the backend: `denokv:<path>` is a Deno KV file (Deno only),
 * `postgres://…` a PostgreSQL database, anything else a libSQL URL.
 */
import type { KvStore } from "@floret/engine";
import { denoKvStore } from "@floret/engine/deno-kv";
import { libsqlStore } from "@floret/engine/libsql";
import { postgresStore } from "@floret/engine/postgres";

const DENO_KV = "denokv:";

/** Opens the store a URL names; the store owns (and closes) what it opens. */
export async function openStoreUrl(url: string): Promise<KvStore> {
  if (url.startsWith("postgres://")) return postgresStore({ url });
  if (!url.startsWith(DENO_KV)) return libsqlStore({ url });
  const deno = (globalThis as { Deno?: { openKv(path: string): Promise<unknown> } }).Deno;
  if (!deno) throw new Error(`${url} needs Deno`);
  return denoKvStore(await deno.openKv(url.slice(DENO_KV.length)), { closeKv: true });
}

/** The URL of a Deno KV file. */
export function denoKvUrl(path: string): string {
  return DENO_KV + path;
}
