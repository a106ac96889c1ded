// Summarises ab.sh output lines (`<side> pair=<i> load1=<l> RESULT {...}`): per side the median of
// the pairs' steady-phase (conc: w3) median wall and CPU us/step, the pair ratios base / branch
// (wall and CPU), and how many pairs the branch used less CPU in.
// Run: `node bench/lib/data/2026-12-02-lean8/ab_summary.mjs <file.jsonl>...`
import { readFileSync } from "node:fs";

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
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
  const side = (name, key) => median(full.map((p) => p[name][key])).toFixed(1);
  const ratios = (key) => full.map((p) => (p.base[key] / p.branch[key]).toFixed(2)).join(" ");
  const lower = full.filter((p) => p.branch.cpu < p.base.cpu).length;
  console.log(
    `${file}: ${full.length} pairs, load ${Math.min(...loads)}-${Math.max(...loads)}; ` +
      `base wall/CPU ${side("base", "wall")} / ${side("base", "cpu")}, ` +
      `branch ${side("branch", "wall")} / ${side("branch", "cpu")} us/step; ` +
      `branch CPU lower in ${lower} of ${full.length}\n  wall ratios ${
        ratios("wall")
      }\n  CPU ratios  ${ratios("cpu")}`,
  );
}
