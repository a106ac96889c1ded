// Storage fault injection at every commit point x every fault kind, over the
// PostgreSQL store (a fresh database per run). The matrix is
// tests/support/storage_faults.ts, shared with the memory and Deno KV runs.
// Skipped, saying so, when no PostgreSQL server is configured.
import { postgresStore } from "@floret/engine/postgres";
import { storageFaultTest } from "./support/storage_faults.ts";
import { freshDatabase, NO_POSTGRES } from "./support/postgres.ts";
import { skipBecause } from "./support/skip.ts";

storageFaultTest(
  "PostgreSQL",
  async () => postgresStore({ url: await freshDatabase("faults"), maxConnections: 2 }),
  { skip: skipBecause(import.meta.url, NO_POSTGRES) },
);
