// Summarises alternated warmup.ts runs (lines "SIDE run=I load1=L" followed by
// that run's "conversations A-B: X us per conversation" marks): the median us
// per conversation of each side over 101-300 and 301-600, the change, and in
// how many pairs (a base run, then the branch run after it) the branch was faster.
// Run: node bench/archive/2026-12-02-conv10/warm_summary.mjs FILE [...]
import { readFileSync } from "node:fs";

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
for (const file of process.argv.slice(2)) {
  const runs = [];
  for (const line of readFileSync(file, "utf8").split("\n")) {
    const head = /^(\S+) run=(\d+) load1=([\d.]+)$/.exec(line);
    if (head) runs.push({ side: head[1] === "base" ? "base" : "branch", load: Number(head[3]) });
    const mark = /^conversations (\d+-\d+): (\d+) us per conversation$/.exec(line);
    if (mark && runs.length > 0) runs[runs.length - 1][mark[1]] = Number(mark[2]);
  }
  const loads = runs.map((r) => r.load);
  const parts = [];
  for (const range of ["101-300", "301-600"]) {
    const of = (side) =>
      median(runs.filter((r) => r.side === side && r[range]).map((r) => r[range]));
    const [b, r] = [of("base"), of("branch")];
    // Pairs: each base run with the branch run after it.
    let won = 0;
    let pairs = 0;
    for (let i = 0; i + 1 < runs.length; i++) {
      if (runs[i].side !== "base" || runs[i + 1].side !== "branch") continue;
      pairs++;
      if (runs[i + 1][range] < runs[i][range]) won++;
    }
    parts.push(`${range}: ${b} -> ${r} us (${(100 * (r / b - 1)).toFixed(1)} %, ${won}/${pairs})`);
  }
  const n = runs.filter((r) => r.side === "base").length;
  console.log(
    `${file}: ${n} runs a side, load ${Math.min(...loads)}-${Math.max(...loads)}; ${
      parts.join("; ")
    }`,
  );
}
