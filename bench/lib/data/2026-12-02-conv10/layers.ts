/**
 * Sums one or more `.cpuprofile`s from `window_profile.ts` by sample count
 * (the time deltas include the gap before `Profiler.stop`, so counts are the
 * fairer weight) and prints: the outermost frame of this repository's code on
 * each sample's stack (which layer a sample belongs to), the inclusive share
 * of every function of ours, and the self share of every function.
 *
 * Run: `node --import tsx bench/lib/data/2026-12-02-conv10/layers.ts A.cpuprofile [B ...] [--top=60]
 * [--under=NAME]` (`--under`: only samples with a frame of ours whose label starts with NAME)
 *
 * @module
 */
import { readFileSync } from "node:fs";

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
}

const args = process.argv.slice(2);
const top = Number(args.find((a) => a.startsWith("--top="))?.slice(6) ?? 60);
const files = args.filter((a) => !a.startsWith("--"));
// --under=NAME: only samples with a frame of ours whose label starts with NAME on the stack
const under = args.find((a) => a.startsWith("--under="))?.slice(8);
const shortUrl = (url: string): string => {
  const at = url.indexOf("/node_modules/");
  if (at >= 0) return url.slice(at + 1);
  const repo = url.match(/\/(src|adapters|bench|testing)\/.*$/);
  return repo ? repo[0].slice(1) : url.replace(/^file:\/\//, "");
};
const label = (f: CallFrame): string =>
  `${f.functionName || "(anonymous)"} ${shortUrl(f.url)}:${f.lineNumber + 1}:${f.columnNumber + 1}`;
const ours = (url: string): boolean =>
  !url.includes("/node_modules/") && /\/(src|adapters)\//.test(url);
const idle = new Set(["(idle)", "(program)", "(root)"]);

const outer = new Map<string, number>();
const inclusive = new Map<string, number>();
const self = new Map<string, number>();
let total = 0;
const add = (m: Map<string, number>, k: string) => m.set(k, (m.get(k) ?? 0) + 1);
for (const file of files) {
  const profile = JSON.parse(readFileSync(file, "utf8")) as CpuProfile;
  const byId = new Map<number, ProfileNode>();
  const parent = new Map<number, number>();
  for (const node of profile.nodes) {
    byId.set(node.id, node);
    for (const child of node.children ?? []) parent.set(child, node.id);
  }
  for (const id of profile.samples) {
    const leaf = byId.get(id)!;
    if (idle.has(leaf.callFrame.functionName)) continue;
    // the profiler's own call to stop
    let stack: CallFrame[] = [];
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      stack.push(byId.get(cur)!.callFrame);
    }
    if (stack.some((f) => f.url === "node:inspector")) continue;
    if (under !== undefined && !stack.some((f) => ours(f.url) && label(f).startsWith(under))) {
      continue;
    }
    total++;
    add(self, leaf.callFrame.url ? label(leaf.callFrame) : `(${leaf.callFrame.functionName})`);
    const seen = new Set<string>();
    let outermost = "(no frame of ours)";
    for (const frame of stack) {
      if (!ours(frame.url)) continue;
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
