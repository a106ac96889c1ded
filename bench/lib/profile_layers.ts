/**
 * Sums one or more `.cpuprofile`s (say, from `window_profile.ts`) by sample count
 * (the time deltas include the gap before `Profiler.stop`, so counts are the
 * fairer weight) and prints: the outermost frame of this repository's code on
 * each sample's stack (which layer a sample belongs to), the inclusive share
 * of every function of ours, and the self share of every function.
 *
 * Run: `node --import tsx bench/lib/profile_layers.ts A.cpuprofile [B ...] [--top=60]
 * [--under=NAME]` (`--under`: only samples with a frame of ours whose label starts with NAME)
 *
 * @module
 */
import { type CallFrame, isOurs, readProfile, shortUrl } from "./cpu_profile.ts";

const args = process.argv.slice(2);
const top = Number(args.find((a) => a.startsWith("--top="))?.slice(6) ?? 60);
const files = args.filter((a) => !a.startsWith("--"));
// --under=NAME: only samples with a frame of ours whose label starts with NAME on the stack
const under = args.find((a) => a.startsWith("--under="))?.slice(8);
const label = (f: CallFrame): string =>
  `${f.functionName || "(anonymous)"} ${shortUrl(f.url)}:${f.lineNumber + 1}:${f.columnNumber + 1}`;
const idle = new Set(["(idle)", "(program)", "(root)"]);

const outer = new Map<string, number>();
const inclusive = new Map<string, number>();
const self = new Map<string, number>();
let total = 0;
const add = (m: Map<string, number>, k: string) => m.set(k, (m.get(k) ?? 0) + 1);
for (const file of files) {
  const { profile, byId, parent } = readProfile(file);
  for (const id of profile.samples) {
    const leaf = byId.get(id)!;
    if (idle.has(leaf.callFrame.functionName)) continue;
    // the profiler's own call to stop
    let stack: CallFrame[] = [];
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      stack.push(byId.get(cur)!.callFrame);
    }
    if (stack.some((f) => f.url === "node:inspector")) continue;
    if (under !== undefined && !stack.some((f) => isOurs(f.url) && label(f).startsWith(under))) {
      continue;
    }
    total++;
    add(self, leaf.callFrame.url ? label(leaf.callFrame) : `(${leaf.callFrame.functionName})`);
    const seen = new Set<string>();
    let outermost = "(no frame of ours)";
    for (const frame of stack) {
      if (!isOurs(frame.url)) continue;
      const key = label(frame);
      outermost = key;
      if (seen.has(key)) continue;
      seen.add(key);
      add(inclusive, key);
    }
    add(outer, outermost);
    stack = [];
  }
}
const print = (title: string, m: Map<string, number>) => {
  console.log(`\n${title}`);
  for (const [k, n] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(`${(100 * n / total).toFixed(1).padStart(5)}%  ${k}`);
  }
};
console.log(
  `${files.length} profiles, ${total} samples (idle and the profiler's own stop left out)`,
);
print("outermost frame of ours (the layer a sample runs under)", outer);
print("inclusive, functions of ours", inclusive);
print("self", self);
