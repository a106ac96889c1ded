/**
 * Summarises a V8 `.cpuprofile` (from `node --cpu-prof`): self time by
 * function and by file, and inclusive time of the functions in this
 * repository's own code, as percentages of the sampled time.
 *
 * Run: `npx tsx bench/lib/profile_top.ts <file.cpuprofile> [top=25]`
 *
 * @module
 */
import { type CallFrame, isOurs, readProfile, shortUrl } from "./cpu_profile.ts";

const [file, topArg] = process.argv.slice(2);
if (!file) throw new Error("usage: profile_top.ts <file.cpuprofile> [top]");
const top = Number(topArg ?? 25);
const { profile, byId, parent } = readProfile(file);

const selfUs = new Map<number, number>();
let totalUs = 0;
for (let i = 0; i < profile.samples.length; i++) {
  const dt = profile.timeDeltas[i] ?? 0;
  totalUs += dt;
  selfUs.set(profile.samples[i], (selfUs.get(profile.samples[i]) ?? 0) + dt);
}

const label = (f: CallFrame): string =>
  `${f.functionName || "(anonymous)"} ${shortUrl(f.url)}${f.url ? `:${f.lineNumber + 1}` : ""}`;

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
    if (!isOurs(frame.url)) continue;
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
