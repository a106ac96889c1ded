// deno-fmt-ignore-file -- verbatim copy of the peers' lib/harness.mjs (shared docs bench/peers); check: tail -n +2 | diff
// Shared measurement harness. A peer script calls `runBench(peerName, setup)`.
//
// CLI (one measurement per process, so maxRSS and JIT state are per-measurement):
//   node peer-x.mjs --variant <v> --mode seq --n 10
//   node peer-x.mjs --variant <v> --mode conc --n 5 --convs 200
// Env knobs: WARMUP (default 3), RUNS (default 15), CONC_RUNS (default RUNS).
//
// `setup({variant, N, mode})` returns { runConversation(convId) -> Promise<{finalText, toolResults}>,
//   teardown?(), info? } where toolResults is the number of tool results the ENGINE reports
//   in its own result object for that conversation (or null if the engine does not expose it).
import { createRequire } from 'node:module';
import { counters, FINAL_TEXT } from './script.mjs';

function parseArgs(argv) {
  const out = { variant: 'default', mode: 'seq', n: 10, convs: 200 };
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i];
    const v = argv[i + 1];
    if (k === '--variant') { out.variant = v; i++; }
    else if (k === '--mode') { out.mode = v; i++; }
    else if (k === '--n') { out.n = Number(v); i++; }
    else if (k === '--convs') { out.convs = Number(v); i++; }
    else throw new Error(`unknown arg ${k}`);
  }
  return out;
}

const stats = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length;
  const median = m % 2 ? s[(m - 1) / 2] : (s[m / 2 - 1] + s[m / 2]) / 2;
  return { median, min: s[0], max: s[m - 1] };
};

export function pkgVersion(name) {
  const require = createRequire(import.meta.url);
  try {
    // resolve the package's package.json even when "exports" hides it
    const main = require.resolve(name);
    let dir = main;
    const path = require('node:path');
    const fs = require('node:fs');
    while (dir !== path.dirname(dir)) {
      dir = path.dirname(dir);
      const p = path.join(dir, 'package.json');
      if (fs.existsSync(p)) {
        const j = JSON.parse(fs.readFileSync(p, 'utf8'));
        if (j.name === name) return j.version;
      }
    }
  } catch { /* fall through */ }
  try {
    const fs = require('node:fs');
    const j = JSON.parse(fs.readFileSync(new URL(`../node_modules/${name}/package.json`, import.meta.url), 'utf8'));
    return j.version;
  } catch { return 'unknown'; }
}

export async function runBench(peer, versions, setup) {
  const args = parseArgs(process.argv.slice(2));
  const { variant, mode } = args;
  const N = args.n;
  const convs = mode === 'conc' ? args.convs : 1;
  const WARMUP = Number(process.env.WARMUP ?? 3);
  const RUNS = Number(process.env.RUNS ?? 15);
  // Second ("steady") phase for seq mode: keep warming up until this many steps have run in
  // total, then take another RUNS runs. 0 disables the phase. Conc mode has one phase only
  // (its 3 warm-up batches are already 3 x convs x N steps).
  const STEADY_STEPS = Number(process.env.STEADY_STEPS ?? 3000);

  const impl = await setup({ variant, N, mode });
  const baseRss = process.memoryUsage().rss;

  let convSeq = 0;
  let stepsDone = 0;
  const oneRun = async (label) => {
    const m0 = counters.modelCalls;
    const t0c = counters.toolCalls;
    const ids = Array.from({ length: convs }, () => `${peer}-${variant}-${process.pid}-${label}-${convSeq++}`);
    const cpu0 = process.cpuUsage();
    const start = process.hrtime.bigint();
    const results = convs === 1
      ? [await impl.runConversation(ids[0])]
      : await Promise.all(ids.map((id) => impl.runConversation(id)));
    const end = process.hrtime.bigint();
    const cpu = process.cpuUsage(cpu0);
    // ---- verification (outside the timed region) ----
    const dTool = counters.toolCalls - t0c;
    const dModel = counters.modelCalls - m0;
    if (dTool !== N * convs) throw new Error(`VERIFY FAILED: tool handler ran ${dTool} times, expected ${N * convs}`);
    if (dModel !== (N + 1) * convs) throw new Error(`VERIFY FAILED: model called ${dModel} times, expected ${(N + 1) * convs}`);
    for (const r of results) {
      if (r.finalText !== FINAL_TEXT) throw new Error(`VERIFY FAILED: final text ${JSON.stringify(r.finalText)}`);
      if (r.toolResults !== null && r.toolResults !== N) throw new Error(`VERIFY FAILED: engine result shows ${r.toolResults} tool results, expected ${N}`);
    }
    stepsDone += N * convs;
    return { wallUs: Number(end - start) / 1e3, cpuUs: cpu.user + cpu.system };
  };

  const steps = N * convs;
  const summarize = (phase, rs) => {
    const w = stats(rs.map((r) => r.wallUs));
    const c = stats(rs.map((r) => r.cpuUs));
    return {
      phase, warmupStepsBefore: null, runs: rs.length,
      usPerStep: { median: w.median / steps, min: w.min / steps, max: w.max / steps },
      cpuUsPerStep: { median: c.median / steps, min: c.min / steps, max: c.max / steps },
      wallMs: { median: w.median / 1e3, min: w.min / 1e3, max: w.max / 1e3 },
      stepsPerSec: { median: steps / (w.median / 1e6), min: steps / (w.max / 1e6), max: steps / (w.min / 1e6) },
    };
  };

  const phases = [];
  for (let i = 0; i < WARMUP; i++) await oneRun(`w${i}`);
  let before = stepsDone;
  const a = [];
  for (let i = 0; i < RUNS; i++) a.push(await oneRun(`a${i}`));
  phases.push({ ...summarize(`w${WARMUP}`, a), warmupStepsBefore: before });
  if (mode === 'seq' && STEADY_STEPS > 0) {
    let k = 0;
    while (stepsDone < STEADY_STEPS) await oneRun(`x${k++}`);
    before = stepsDone;
    const b = [];
    for (let i = 0; i < RUNS; i++) b.push(await oneRun(`b${i}`));
    phases.push({ ...summarize('steady', b), warmupStepsBefore: before });
  }
  const maxRssBytes = process.resourceUsage().maxRSS * 1024;
  const extra = impl.teardown ? await impl.teardown() : undefined;

  const out = {
    peer, variant, mode, N, convs, warmupRuns: WARMUP, runsPerPhase: RUNS, phases,
    rssPeakDeltaMB: (maxRssBytes - baseRss) / (1024 * 1024),
    verified: { toolCallsPerConv: N, modelCallsPerConv: N + 1, conversationsChecked: convSeq },
    versions, node: process.version, info: impl.info ?? null, extra: extra ?? null,
  };
  console.log('RESULT ' + JSON.stringify(out));
}
