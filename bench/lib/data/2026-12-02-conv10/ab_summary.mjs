// Summarises an `ab.sh` output file: median steady wall and CPU us/step per
// side, the change, and in how many pairs the branch was faster.
// Run: node bench/lib/data/2026-12-02-conv10/ab_summary.mjs OUT.txt [...]
import { readFileSync } from "node:fs";

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
for (const file of process.argv.slice(2)) {
  const pairs = new Map();
  const loads = [];
  for (const line of readFileSync(file, "utf8").split("\n")) {
    const m = /^(base|branch) pair=(\d+) load1=([\d.]+) RESULT (.*)$/.exec(line);
    if (!m) continue;
    const r = JSON.parse(m[4]);
    const p = r.phases.find((p) => p.phase === "steady") ?? r.phases[r.phases.length - 1];
    const pair = pairs.get(m[2]) ?? {};
    pair[m[1]] = { wall: p.usPerStep.median, cpu: p.cpuUsPerStep.median };
    pairs.set(m[2], pair);
    loads.push(Number(m[3]));
  }
  const full = [...pairs.values()].filter((p) => p.base && p.branch);
  const side = (s, k) => median(full.map((p) => p[s][k]));
  const won = (k) => full.filter((p) => p.branch[k] < p.base[k]).length;
  const pct = (k) => (100 * (side("branch", k) / side("base", k) - 1)).toFixed(1);
  console.log(
    `${file}: ${full.length} pairs, load ${Math.min(...loads)}-${Math.max(...loads)}; ` +
      `wall ${side("base", "wall").toFixed(1)} -> ${side("branch", "wall").toFixed(1)} (${
        pct("wall")
      } %, ${won("wall")}/${full.length}); ` +
      `CPU ${side("base", "cpu").toFixed(1)} -> ${side("branch", "cpu").toFixed(1)} (${
        pct("cpu")
      } %, ${won("cpu")}/${full.length})`,
  );
}
