/**
 * Summarises side-by-side passes (`side_by_side.sh`): per row the median
 * us/step of each pass (the `steady` phase for sequential workloads, the
 * only phase for concurrent ones), the median across passes, CPU us/step,
 * steps/s, and each peer's ratio to every Floret variant
 * (`peer us/step / Floret us/step`, higher is better for Floret).
 *
 * Run: `npx tsx bench/lib/ratios.ts pass-1.jsonl pass-2.jsonl … [--md]`
 *
 * @module
 */
import { readFileSync } from "node:fs";

interface Stat {
  median: number;
  min: number;
  max: number;
}

interface Phase {
  phase: string;
  usPerStep: Stat;
  cpuUsPerStep: Stat;
  stepsPerSec: Stat;
}

interface ResultLine {
  failed?: boolean;
  peer: string;
  variant: string;
  mode: string;
  N: number;
  phases?: Phase[];
  rssPeakDeltaMB?: number;
  load1?: number;
}

interface Row {
  key: string;
  peer: string;
  variant: string;
  workload: string;
  us: number[];
  cpu: number[];
  stepsPerSec: number[];
  rss: number[];
  load: number[];
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length;
  return m === 0 ? NaN : m % 2 ? s[(m - 1) / 2] : (s[m / 2 - 1] + s[m / 2]) / 2;
};
const f0 = (x: number): string => (Number.isNaN(x) ? "—" : x >= 100 ? x.toFixed(0) : x.toFixed(1));

const args = process.argv.slice(2);
const md = args.includes("--md");
const files = args.filter((a) => !a.startsWith("--"));
const rows = new Map<string, Row>();
const failures: string[] = [];

for (const [pass, file] of files.entries()) {
  for (const text of readFileSync(file, "utf8").split("\n")) {
    if (!text.trim()) continue;
    const r = JSON.parse(text) as ResultLine;
    const workload = `${r.mode === "conc" ? "conc" : "seq"} N=${r.N}`;
    if (r.failed || !r.phases) {
      failures.push(`pass ${pass + 1}: ${r.peer} ${r.variant} ${workload}`);
      continue;
    }
    const phase = r.mode === "conc"
      ? r.phases[0]
      : r.phases.find((p) => p.phase === "steady") ?? r.phases[0];
    const key = `${r.peer}|${r.variant}|${workload}`;
    let row = rows.get(key);
    if (!row) {
      row = {
        key,
        peer: r.peer,
        variant: r.variant,
        workload,
        us: [],
        cpu: [],
        stepsPerSec: [],
        rss: [],
        load: [],
      };
      rows.set(key, row);
    }
    row.us[pass] = phase.usPerStep.median;
    row.cpu.push(phase.cpuUsPerStep.median);
    row.stepsPerSec.push(phase.stepsPerSec.median);
    row.rss.push(r.rssPeakDeltaMB ?? NaN);
    if (r.load1 !== undefined) row.load.push(r.load1);
  }
}

function table(header: string[], body: string[][]): void {
  if (md) {
    console.log(`| ${header.join(" | ")} |`);
    console.log(`|${header.map((_, i) => (i >= 2 ? "---:" : "---")).join("|")}|`);
    for (const b of body) console.log(`| ${b.join(" | ")} |`);
    return;
  }
  const w = header.map((h, i) => Math.max(h.length, ...body.map((b) => b[i].length)));
  const fmt = (cells: string[]): string =>
    cells.map((c, i) => (i >= 2 ? c.padStart(w[i]) : c.padEnd(w[i]))).join("  ");
  console.log(fmt(header));
  for (const b of body) console.log(fmt(b));
}

const all = [...rows.values()].sort((a, b) =>
  a.workload.localeCompare(b.workload, "en", { numeric: true })
);
table(
  [
    "engine/variant",
    "workload",
    ...files.map((_, i) => `pass${i + 1}`),
    "median us/step",
    "max/min",
    "cpu us/step",
    "steps/s",
    "peak RSS +MB",
    "load1 at start",
  ],
  all.map((r) => {
    const us = r.us.filter((x) => x !== undefined);
    return [
      `${r.peer}/${r.variant}`,
      r.workload,
      ...files.map((_, i) => (r.us[i] === undefined ? "—" : f0(r.us[i]))),
      f0(median(us)),
      (Math.max(...us) / Math.min(...us)).toFixed(2),
      f0(median(r.cpu)),
      median(r.stepsPerSec).toFixed(0),
      f0(median(r.rss)),
      r.load.map((x) => x.toFixed(2)).join(" "),
    ];
  }),
);

console.log("");
const ours = all.filter((r) => r.peer === "floret");
const peers = all.filter((r) => r.peer !== "floret");
const body: string[][] = [];
for (const p of peers) {
  for (const o of ours.filter((x) => x.workload === p.workload)) {
    const pm = median(p.us.filter((x) => x !== undefined));
    const om = median(o.us.filter((x) => x !== undefined));
    // Ratios inside one pass share that pass's load; their median is the steadier figure.
    const samePass = p.us.flatMap((x, i) =>
      x !== undefined && o.us[i] !== undefined ? [x / o.us[i]] : []
    );
    body.push([
      `${p.peer}/${p.variant} ÷ floret/${o.variant}`,
      p.workload,
      f0(pm),
      f0(om),
      (pm / om).toFixed(2),
      samePass.length ? median(samePass).toFixed(2) : "—",
      samePass.map((x) => x.toFixed(2)).join(" "),
    ]);
  }
}
table([
  "ratio",
  "workload",
  "peer us/step",
  "floret us/step",
  "ratio of medians",
  "median same-pass ratio",
  "same-pass ratios",
], body);
for (const f of failures) console.log(`FAILED: ${f}`);
