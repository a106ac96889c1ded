/**
 * What one fsync costs on this disk: 300 `fdatasync` calls, each after a
 * 4 KiB append to a file in the temp directory, the size of one WAL frame.
 * The libSQL FULL target ("within one fsync per commit of NORMAL") is read
 * against these figures.
 *
 * Run: `npx tsx bench/fdatasync.ts` (prints p10, median, p90 and mean in µs)
 *
 * @module
 */
import { closeSync, fdatasyncSync, mkdtempSync, openSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const SYNCS = 300;
const dir = mkdtempSync(join(tmpdir(), "floret-fsync-"));
const fd = openSync(join(dir, "probe"), "a");
const frame = new Uint8Array(4096).fill(1);
const micros: number[] = [];
for (let i = 0; i < SYNCS; i++) {
  writeSync(fd, frame);
  const started = performance.now();
  fdatasyncSync(fd);
  micros.push((performance.now() - started) * 1000);
}
closeSync(fd);
rmSync(dir, { recursive: true, force: true });
micros.sort((a, b) => a - b);
const at = (q: number): string => micros[Math.floor(q * SYNCS)].toFixed(0);
const mean = micros.reduce((sum, us) => sum + us, 0) / SYNCS;
console.log(
  `fdatasync of a 4 KiB append x${SYNCS}: p10 ${at(0.1)} median ${at(0.5)} p90 ${at(0.9)} ` +
    `mean ${mean.toFixed(0)} us`,
);
