// The kill-soak's short form on PostgreSQL (tests/support/soak.ts; the long
// form is `npm run soak -- --store postgres --minutes N` with
// FLORET_POSTGRES_URL set). Skipped, saying so, without a server.
import { soakTest } from "./support/soak_suite.ts";
import { NO_POSTGRES } from "./support/postgres.ts";
import { skipBecause } from "./support/skip.ts";

soakTest("PostgreSQL", "postgres", { skip: skipBecause(import.meta.url, NO_POSTGRES) });
