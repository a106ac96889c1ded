/**
 * Summarises a V8 `.cpuprofile` (from `node --cpu-prof`): self time by
 * function and by file, and inclusive time of the functions in this
 * repository's own code, as percentages of the sampled time.
 *
 * Run: `npx tsx bench/lib/profile_top.ts <file.cpuprofile> [top=25]`
 *
 * @module
 */
import { readFileSync } from "node:fs";

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}

interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const [file, topArg] = process.argv.slice(2);
if (!file) throw new Error("usage: profile_top.ts <file.cpuprofile> [top]");
const top = Number(topArg ?? 25);
const profile = JSON.parse(readFileSync(file, "utf8")) as CpuProfile;

const byId = new Map<number, ProfileNode>();
const parent = new Map<number, number>();
for (const node of profile.nodes) {
  byId.set(node.id, node);
  for (const child of node.children ?? []) parent.set(child, node.id);
}

const selfUs = new Map<number, number>();
let totalUs = 0;
for (let i = 0; i < profile.samples.length; i++) {
  const dt = profile.timeDeltas[i] ?? 0;
  totalUs += dt;
  selfUs.set(profile.samples[i], (selfUs.get(profile.samples[i]) ?? 0) + dt);
}

const shortUrl = (url: string): string => {
  const at = url.indexOf("/node_modules/");
  if (at >= 0) return url.slice(at + 1);
  const repo = url.match(/\/(src|adapters|bench|testing)\/.*$/);
  return repo ? repo[0].slice(1) : url.replace(/^file:\/\//, "");
};
const label = (f: CallFrame): string =>
  `${f.functionName || "(anonymous)"} ${shortUrl(f.url)}${f.url ? `:${f.lineNumber + 1}` : ""}`;
const ours = (url: string): boolean =>
  !url.includes("/node_modules/") && /\/(src|adapters)\//.test(url);

const selfByFn = new Map<string, number>();
const selfByFile = new Map<string, number>();
const inclusiveOurs = new Map<string, number>();
for (const [id, us] of selfUs) {
  const node = byId.get(id)!;
  const fn = label(node.callFrame);
  selfByFn.set(fn, (selfByFn.get(fn) ?? 0) + us);
  const f = node.callFrame.url ? shortUrl(node.callFrame.url) : `(${node.callFrame.functionName})`;
  selfByFile.set(f, (selfByFile.get(f) ?? 0) + us);
  // inclusive: credit every distinct frame of ours on the stack once
  const seen = new Set<string>();
  for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
    const frame = byId.get(cur)!.callFrame;
    if (!ours(frame.url)) continue;
    const key = label(frame);
    if (seen.has(key)) continue;
    seen.add(key);
    inclusiveOurs.set(key, (inclusiveOurs.get(key) ?? 0) + us);
  }
}

const pct = (us: number): string => `${((100 * us) / totalUs).toFixed(1).padStart(5)}%`;
const print = (title: string, map: Map<string, number>, n: number): void => {
  console.log(`\n${title}`);
  for (const [k, us] of [...map].sort((a, b) => b[1] - a[1]).slice(0, n)) {
    console.log(`${pct(us)}  ${k}`);
  }
};
console.log(`${file}: ${(totalUs / 1e6).toFixed(2)} s sampled, ${profile.samples.length} samples`);
print("self time by function", selfByFn, top);
print("self time by file", selfByFile, top);
print("inclusive time, functions in src/ and adapters/", inclusiveOurs, top);
