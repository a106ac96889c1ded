/**
 * Kill-soak: `npm run soak -- --minutes N [--store libsql|deno-kv|postgres]` (defaults:
 * 2 minutes, libSQL). A host process runs tool conversations on three threads
 * of one store file; this process SIGKILLs it at random moments, restarts it,
 * and checks the store after every restart and at the end (see
 * tests/support/soak.ts). Exits non-zero when an acknowledged send was lost,
 * anything ran twice, or an invariant broke.
 *
 * Run on another runtime: `deno run -A bench/soak.ts --minutes 1`, `bun bench/soak.ts`.
 * `--store deno-kv` runs on Deno only; started from Node or Bun (as `npm run
 * soak` is), the script runs itself again under the project's Deno.
 *
 * @module
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { runSoak, type SoakStore } from "../tests/support/soak.ts";

/** The value after `--name`, if given. */
function flag(name: string): string | undefined {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? process.argv[at + 1] : undefined;
}

const minutesFlag = flag("minutes");
const minutes = minutesFlag === undefined ? 2 : Number(minutesFlag);
if (!Number.isFinite(minutes) || minutes <= 0) {
  console.error("--minutes must be a positive number");
  process.exit(2);
}
const store = (flag("store") ?? "libsql") as SoakStore;
if (store !== "libsql" && store !== "deno-kv" && store !== "postgres") {
  console.error("--store must be libsql, deno-kv or postgres (postgres needs FLORET_POSTGRES_URL)");
  process.exit(2);
}
const runtime = "Deno" in globalThis ? "deno" : "Bun" in globalThis ? "bun" : "node";

if (store === "deno-kv" && runtime !== "deno") {
  // Deno KV exists only on Deno: hand the whole run to the project's Deno (its npm package).
  const local = fileURLToPath(new URL("../node_modules/.bin/deno", import.meta.url));
  const deno = existsSync(local) ? local : "deno";
  const script = fileURLToPath(import.meta.url);
  const args = ["run", "-A", "--unstable-kv", script, ...process.argv.slice(2)];
  console.log(`soak: --store deno-kv needs Deno; running ${deno} ${args.join(" ")}`);
  const result = spawnSync(deno, args, { stdio: "inherit" });
  if (result.error) {
    console.error(`soak: could not start Deno: ${result.error.message}`);
    process.exit(2);
  }
  process.exit(result.status ?? 1);
}

const started = Date.now();
const figures = await runSoak(minutes * 60_000, { log: (line) => console.log(line), store });
const { problems, ...counts } = figures;
console.log(
  `soak (${runtime}, ${store}, ${((Date.now() - started) / 60_000).toFixed(1)} min): ` +
    `turns acknowledged ${counts.turnsAcknowledged}, turns found ${counts.turnsFound}, ` +
    `kills ${counts.kills}, lost acknowledged commands ${counts.lostAcknowledged}, ` +
    `duplicated side effects or sends ${counts.duplicated}, invariant violations ${counts.violations}, ` +
    `unknowns reported ${counts.unknowns}, side effects ${counts.sideEffects}`,
);
for (const problem of problems) console.log(`  ${problem}`);
process.exit(counts.lostAcknowledged + counts.duplicated + counts.violations === 0 ? 0 : 1);
