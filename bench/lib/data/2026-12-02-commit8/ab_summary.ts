/**
 * Summarises `bench/lib/ab.sh` output files: per side, the median of the
 * runs' steady-phase median wall and CPU us per step, the CPU change, and the
 * pair ratios base ÷ branch (above 1: the branch was faster in that pair).
 *
 * Run: `npx tsx bench/lib/data/2026-12-02-commit8/ab_summary.ts <ab output>...`
 *
 * @module
 */
import { readFileSync } from "node:fs";

interface Run {
  side: string;
  pair: string;
  load: number;
  wall: number;
  cpu: number;
}

interface Phase {
  phase: string;
  usPerStep: { median: number };
  cpuUsPerStep: { median: number };
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

for (const file of process.argv.slice(2)) {
  const runs: Run[] = readFileSync(file, "utf8").trim().split("\n").map((line) => {
    const [side, pair, load] = line.split(" ");
    const result = JSON.parse(line.slice(line.indexOf("{"))) as { phases: Phase[] };
    const phase = result.phases.find((p) => p.phase === "steady") ??
      result.phases[result.phases.length - 1];
    return {
      side,
      pair: pair.split("=")[1],
      load: Number(load.split("=")[1]),
      wall: phase.usPerStep.median,
      cpu: phase.cpuUsPerStep.median,
    };
  });
  const base = runs.filter((run) => run.side === "base");
  const branch = runs.filter((run) => run.side === "branch");
  const ratios = (pick: (run: Run) => number): string =>
    base.map((b) => {
      const r = branch.find((run) => run.pair === b.pair);
      return r ? (pick(b) / pick(r)).toFixed(2) : "-";
    }).join(" ");
  const loads = runs.map((run) => run.load);
  const baseCpu = median(base.map((run) => run.cpu));
  const branchCpu = median(branch.map((run) => run.cpu));
  console.log(
    `${file.split("/").pop()}: load ${Math.min(...loads)}-${Math.max(...loads)}, ` +
      `${base.length} pairs; wall / CPU us per step: base ${
        median(base.map((run) => run.wall)).toFixed(1)
      } / ${baseCpu.toFixed(1)}, branch ${median(branch.map((run) => run.wall)).toFixed(1)} / ${
        branchCpu.toFixed(1)
      } (CPU ${(100 * branchCpu / baseCpu - 100).toFixed(1)} %); pair ratios wall ${
        ratios((run) => run.wall)
      }, CPU ${ratios((run) => run.cpu)}`,
  );
}
