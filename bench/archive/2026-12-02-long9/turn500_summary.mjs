// Summarises interleaved turn-500 runs: lines `<side> load1=<l> memory: µs per turn ... turns 6-25:
// A, of turns 481-500: B (R×) ...` from journal_growth.ts --timed=memory, and `<side> load1=<l>
// PROBE {...}` from probe.ts. Per side: the runs' ratios, and the medians of turn 10, turn 500 and
// the ratio.
// Run: `node bench/archive/2026-12-02-long9/turn500_summary.mjs <file>...`
import { readFileSync } from "node:fs";

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
for (const file of process.argv.slice(2)) {
  const sides = new Map();
  for (const line of readFileSync(file, "utf8").split("\n")) {
    const side = /^([\w-]+) load1=/.exec(line)?.[1];
    if (!side) continue;
    let run;
    const jg = /turns 6-25: (\d+), of turns 481-500: (\d+)/.exec(line);
    if (jg) run = { early: Number(jg[1]), late: Number(jg[2]) };
    const probe = /PROBE (\{.*\})/.exec(line);
    if (probe) {
      const p = JSON.parse(probe[1]);
      run = { early: p.wall10, late: p.wall500, cpuEarly: p.cpu10, cpuLate: p.cpu500 };
    }
    if (!run) continue;
    if (!sides.has(side)) sides.set(side, []);
    sides.get(side).push(run);
  }
  console.log(file);
  for (const [side, runs] of sides) {
    const ratios = runs.map((r) => r.late / r.early);
    let line = `  ${side}: ${runs.length} runs, turn 10 ${median(runs.map((r) => r.early))} µs, ` +
      `turn 500 ${median(runs.map((r) => r.late))} µs, ratio median ${median(ratios).toFixed(2)} ` +
      `(runs: ${ratios.map((x) => x.toFixed(2)).join(" ")})`;
    if (runs[0].cpuEarly !== undefined) {
      const cpu = runs.map((r) => r.cpuLate / r.cpuEarly);
      line += `; CPU turn 10 ${median(runs.map((r) => r.cpuEarly))}, turn 500 ` +
        `${median(runs.map((r) => r.cpuLate))}, ratio median ${median(cpu).toFixed(2)}`;
    }
    console.log(line);
  }
}
