/**
 * The commit path's share of a CPU profile, round 8: of the busy samples
 * (all but `(idle)`), the share under `ThreadActor.commit`, the part of it
 * outside `#landed` (the journal, codec, key and store work: this round's
 * area), `#landed` itself (the projections), `planOf`, the memory store's
 * planned commit, `encodeText`'s own time and the garbage collector.
 *
 * Run: `npx tsx bench/archive/2026-12-02-commit8/commit_share.ts <file.cpuprofile>...`
 * on profiles from `N=10 ROUNDS=12 node --cpu-prof --cpu-prof-interval 100
 * --cpu-prof-dir=D --import tsx bench/lib/profile_drive.ts` (one per checkout, alternated).
 *
 * @module
 */
import { readFileSync } from "node:fs";

interface Frame {
  functionName: string;
  url: string;
}

interface Node {
  id: number;
  callFrame: Frame;
  children?: number[];
}

const within = (frame: Frame, name: string, file: string): boolean =>
  frame.functionName === name && frame.url.endsWith(file);

for (const file of process.argv.slice(2)) {
  const profile = JSON.parse(readFileSync(file, "utf8")) as {
    nodes: Node[];
    samples: number[];
    timeDeltas: number[];
  };
  const byId = new Map<number, Node>();
  const parent = new Map<number, number>();
  for (const node of profile.nodes) {
    byId.set(node.id, node);
    for (const child of node.children ?? []) parent.set(child, node.id);
  }
  const us = { busy: 0, gc: 0, encode: 0, commit: 0, outside: 0, landed: 0, plan: 0, store: 0 };
  for (let i = 0; i < profile.samples.length; i++) {
    const dt = profile.timeDeltas[i] ?? 0;
    const leaf = byId.get(profile.samples[i])!.callFrame;
    if (leaf.functionName === "(idle)") continue;
    us.busy += dt;
    if (leaf.functionName === "(garbage collector)") us.gc += dt;
    if (leaf.functionName === "encodeText") us.encode += dt;
    let commit = false, landed = false, plan = false, store = false;
    for (let at: number | undefined = profile.samples[i]; at !== undefined; at = parent.get(at)) {
      const frame = byId.get(at)!.callFrame;
      commit ||= within(frame, "commit", "src/runtime/thread_actor.ts");
      landed ||= within(frame, "#landed", "src/runtime/thread_actor.ts");
      plan ||= within(frame, "planOf", "src/journal/commit_writer.ts");
      store ||= within(frame, "planned", "adapters/storage/memory.ts");
    }
    if (commit) us.commit += dt;
    if (commit && !landed) us.outside += dt;
    if (landed) us.landed += dt;
    if (plan) us.plan += dt;
    if (store) us.store += dt;
  }
  const pct = (x: number): string => `${((100 * x) / us.busy).toFixed(1)} %`;
  console.log(
    `${file.split("/").slice(-2).join("/")}: busy ${(us.busy / 1e6).toFixed(2)} s; ` +
      `ThreadActor.commit ${pct(us.commit)}, outside #landed ${pct(us.outside)}, ` +
      `#landed ${pct(us.landed)}, planOf ${pct(us.plan)}, memory planned ${pct(us.store)}, ` +
      `encodeText self ${pct(us.encode)}, GC ${pct(us.gc)}`,
  );
}
