/**
 * Kill-soak: `npm run soak -- --minutes N` (default 2). A host process runs
 * tool conversations on three threads of one libSQL file; this process
 * SIGKILLs it at random moments, restarts it, and checks the store after
 * every restart and at the end (see tests/support/soak.ts). Exits non-zero
 * when an acknowledged send was lost, anything ran twice, or an invariant broke.
 *
 * Run on another runtime: `deno run -A bench/soak.ts --minutes 1`, `bun bench/soak.ts`.
 *
 * @module
 */
import { runSoak } from "../tests/support/soak.ts";

const flag = process.argv.indexOf("--minutes");
const minutes = flag >= 0 ? Number(process.argv[flag + 1]) : 2;
if (!Number.isFinite(minutes) || minutes <= 0) {
  console.error("--minutes must be a positive number");
  process.exit(2);
}
const runtime = "Deno" in globalThis ? "deno" : "Bun" in globalThis ? "bun" : "node";
const started = Date.now();
const figures = await runSoak(minutes * 60_000, { log: (line) => console.log(line) });
const { problems, ...counts } = figures;
console.log(
  `soak (${runtime}, ${((Date.now() - started) / 60_000).toFixed(1)} min): ` +
    `turns acknowledged ${counts.turnsAcknowledged}, turns found ${counts.turnsFound}, ` +
    `kills ${counts.kills}, lost acknowledged commands ${counts.lostAcknowledged}, ` +
    `duplicated side effects or sends ${counts.duplicated}, invariant violations ${counts.violations}, ` +
    `unknowns reported ${counts.unknowns}, side effects ${counts.sideEffects}`,
);
for (const problem of problems) console.log(`  ${problem}`);
process.exit(counts.lostAcknowledged + counts.duplicated + counts.violations === 0 ? 0 : 1);
