/**
 * The layers of `src/`: each file may import only from its own layer or the
 * ones below it, and never from outside `src/` (adapters, entries, tests).
 * The order is stated in README.md ("Layout"); this test reads the sources.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { posix } from "node:path";

/** Bottom first. A directory (or top-level file) of `src/` belongs to exactly one layer. */
const LAYERS: readonly (readonly string[])[] = [
  ["errors.ts", "_runtime.ts", "optional_peer.ts", "text"],
  ["identity", "spi"],
  ["provider", "tools", "validation", "observation"],
  ["config", "context"],
  ["journal"],
  ["projection"],
  ["engine", "testing"],
  ["runtime", "subagents", "goals"],
];

/** The layer index of a path relative to `src/`, or `undefined` for an unlisted place. */
function layerOf(path: string): number | undefined {
  const head = path.split("/")[0];
  const index = LAYERS.findIndex((layer) => layer.includes(head));
  return index < 0 ? undefined : index;
}

/** Relative specifiers of static imports, re-exports and dynamic imports. */
function importsOf(source: string): string[] {
  const found: string[] = [];
  const pattern = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)["'](\.{1,2}\/[^"']+)["']/g;
  for (const match of source.matchAll(pattern)) found.push(match[1]);
  return found;
}

/**
 * Every import of `files` (path relative to `src/` → source text) that goes
 * up a layer or leaves `src/`, as readable lines.
 */
function layerViolations(files: ReadonlyMap<string, string>): string[] {
  const problems: string[] = [];
  for (const [path, source] of files) {
    const own = layerOf(path);
    if (own === undefined) {
      problems.push(`${path}: not in any layer (add its directory to LAYERS and the README)`);
      continue;
    }
    for (const specifier of importsOf(source)) {
      const target = posix.normalize(posix.join(posix.dirname(path), specifier));
      if (target.startsWith("../")) {
        problems.push(`${path}: imports ${specifier}, outside src/`);
        continue;
      }
      const layer = layerOf(target);
      if (layer === undefined || layer > own) {
        problems.push(`${path}: imports ${specifier} from a layer above it`);
      }
    }
  }
  return problems;
}

function readSources(): Map<string, string> {
  const root = fileURLToPath(new URL("../src/", import.meta.url));
  const files = new Map<string, string>();
  const walk = (dir: string): void => {
    for (const entry of readdirSync(root + dir, { withFileTypes: true })) {
      const path = dir === "" ? entry.name : `${dir}/${entry.name}`;
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith(".ts")) files.set(path, readFileSync(root + path, "utf8"));
    }
  };
  walk("");
  return files;
}

describe("layers of src/", () => {
  it("no file imports from a layer above its own or from outside src/", () => {
    const files = readSources();
    assert.ok(files.size > 40, `read only ${files.size} files`);
    assert.deepEqual(layerViolations(files), []);
  });

  it("the journal layer no longer reaches the runtime or the projections", () => {
    const files = readSources();
    const journal = [...files].filter(([path]) => path.startsWith("journal/"));
    assert.ok(journal.length > 0);
    for (const [path, source] of journal) {
      for (const specifier of importsOf(source)) {
        assert.doesNotMatch(specifier, /runtime|projection|engine/, `${path} imports ${specifier}`);
      }
    }
  });

  it("the check finds an upward import, an escape from src/ and an unlisted directory", () => {
    const bad = new Map([
      ["journal/a.ts", 'import type { X } from "../src/runtime/actor/thread_actor.ts";'],
      ["projection/b.ts", 'export { y } from "../engine/run_loop.ts";'],
      ["runtime/c.ts", 'const m = await import("../../adapters/tokens/mod.ts");'],
      ["newdir/d.ts", 'import "./e.ts";'],
      ["engine/ok.ts", 'import { z } from "zod";\nimport type { E } from "../journal/entries.ts";'],
    ]);
    const found = layerViolations(bad);
    assert.equal(found.length, 4, found.join("\n"));
    assert.match(found[0], /^journal\/a\.ts: .*layer above/);
    assert.match(found[1], /^projection\/b\.ts: .*layer above/);
    assert.match(found[2], /^runtime\/c\.ts: .*outside src/);
    assert.match(found[3], /^newdir\/d\.ts: not in any layer/);
  });
});
