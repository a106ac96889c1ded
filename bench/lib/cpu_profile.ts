/**
 * Reading V8 `.cpuprofile` files (from `node --cpu-prof` or `node:inspector`)
 * for the summaries in `profile_top.ts` and `profile_layers.ts`: the file's
 * shape, each node's parent, and short labels for frames.
 *
 * @module
 */
import { readFileSync } from "node:fs";

/** Where a profile node's function is. */
export interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}

/** One node of the profile's call tree. */
export interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}

/** A profile: its call tree, the sampled node of each sample, and the time before each. */
export interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** A profile read from a file, with its nodes by id and each node's parent id. */
export interface ReadProfile {
  profile: CpuProfile;
  byId: Map<number, ProfileNode>;
  parent: Map<number, number>;
}

/**
 * Reads a `.cpuprofile` file and indexes its call tree.
 *
 * @param file the profile's path
 * @returns the profile, its nodes by id and their parents
 */
export function readProfile(file: string): ReadProfile {
  const profile = JSON.parse(readFileSync(file, "utf8")) as CpuProfile;
  const byId = new Map<number, ProfileNode>();
  const parent = new Map<number, number>();
  for (const node of profile.nodes) {
    byId.set(node.id, node);
    for (const child of node.children ?? []) parent.set(child, node.id);
  }
  return { profile, byId, parent };
}

/**
 * A frame's URL shortened to the package path or this repository's path.
 *
 * @param url the frame's script URL
 * @returns e.g. `src/engine/run_loop.ts` or `node_modules/libsql/index.js`
 */
export function shortUrl(url: string): string {
  const at = url.indexOf("/node_modules/");
  if (at >= 0) return url.slice(at + 1);
  const repo = url.match(/\/(src|adapters|bench|testing)\/.*$/);
  return repo ? repo[0].slice(1) : url.replace(/^file:\/\//, "");
}

/**
 * Whether a frame's script is the engine's own code (`src/`, `adapters/`).
 *
 * @param url the frame's script URL
 * @returns true for the engine's code
 */
export function isOurs(url: string): boolean {
  return !url.includes("/node_modules/") && /\/(src|adapters)\//.test(url);
}
