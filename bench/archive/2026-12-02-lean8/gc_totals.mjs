// Sums `node --trace-gc-nvp` lines from stdin: per GC kind (s = scavenge, ms = mark-sweep/compact,
// mmc = minor mark-compact) the count and pause, and over all the bytes allocated, copied within
// the young generation and promoted, per step (STEPS = steps the process ran, all rounds).
// Run: `N=10 ROUNDS=8 CONVS=300 node --trace-gc-nvp --import tsx bench/lib/profile_drive.ts 2>&1 |
//   STEPS=24000 node bench/archive/2026-12-02-lean8/gc_totals.mjs`
import { createInterface } from "node:readline";

const steps = Number(process.env.STEPS ?? 1);
const kinds = new Map();
const sums = { allocated: 0, promoted: 0, new_space_survived: 0 };
for await (const line of createInterface({ input: process.stdin })) {
  const kind = / gc=(\w+)/.exec(line)?.[1];
  if (!kind) {
    if (line.trim()) console.log(line);
    continue;
  }
  const field = (name) => Number(new RegExp(` ${name}=([\\d.]+)`).exec(line)?.[1] ?? 0);
  const k = kinds.get(kind) ?? { count: 0, pause: 0 };
  k.count++;
  k.pause += field("pause");
  kinds.set(kind, k);
  for (const name of Object.keys(sums)) sums[name] += field(name);
}
const per = (bytes) => `${(bytes / steps).toFixed(0)} B/step`;
for (const [kind, k] of kinds) {
  console.log(`gc=${kind}: ${k.count} (${(1000 * k.pause / steps).toFixed(2)} us pause/step)`);
}
console.log(
  `allocated ${per(sums.allocated)}, survived a scavenge ${
    per(sums.new_space_survived)
  }, promoted ${per(sums.promoted)}`,
);
