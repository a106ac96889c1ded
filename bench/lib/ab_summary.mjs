// Summarises `bench/lib/ab.sh` output files (`<side> pair=<i> load1=<l> RESULT {...}` lines): per
// side the median of the runs' steady-phase (conc: its one phase) median wall and CPU us per step,
// the change branch vs base, in how many complete pairs the branch was faster, and each pair's ratio
// base / branch (above 1: the branch was faster in that pair).
// Run: `node bench/lib/ab_summary.mjs <ab output>...`
import { readFileSync } from "node:fs";

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

for (const file of process.argv.slice(2)) {
  const pairs = new Map();
  const loads = [];
  for (const line of readFileSync(file, "utf8").split("\n")) {
    const m = /^(base|branch) pair=(\d+) load1=([\d.]+) RESULT (.*)$/.exec(line);
    if (!m) continue;
    const result = JSON.parse(m[4]);
    const phase = result.phases.find((p) => p.phase === "steady") ?? result.phases.at(-1);
    const pair = pairs.get(m[2]) ?? {};
    pair[m[1]] = { wall: phase.usPerStep.median, cpu: phase.cpuUsPerStep.median };
    pairs.set(m[2], pair);
    loads.push(Number(m[3]));
  }
  const full = [...pairs.values()].filter((p) => p.base && p.branch);
  const side = (name, key) => median(full.map((p) => p[name][key]));
  const won = (key) => full.filter((p) => p.branch[key] < p.base[key]).length;
  const change = (key) => (100 * (side("branch", key) / side("base", key) - 1)).toFixed(1);
  const shift = (key) =>
    `${side("base", key).toFixed(1)} -> ${side("branch", key).toFixed(1)} (${change(key)} %, ` +
    `${won(key)}/${full.length})`;
  const ratios = (key) => full.map((p) => (p.base[key] / p.branch[key]).toFixed(2)).join(" ");
  console.log(
    `${file}: ${full.length} pairs, load ${Math.min(...loads)}-${Math.max(...loads)}; ` +
      `wall ${shift("wall")}; CPU ${shift("cpu")}\n  wall ratios ${ratios("wall")}\n  CPU ratios  ${
        ratios("cpu")
      }`,
  );
}
