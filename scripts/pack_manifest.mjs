// Swaps package.json to its published form for the length of `npm pack` /
// `npm publish`, and back. In the repository, package.json "exports" point at
// the .ts sources, so every runtime runs our tests (and the examples and
// benchmarks they spawn) on the sources with no build and no custom flags.
// npm reads the files to pack from disk after `prepack`, so the tarball gets
// the manifest written here: exports that point at dist/ (see sync_exports.mjs).
//
//   node scripts/pack_manifest.mjs publish   (prepack, after the build)
//   node scripts/pack_manifest.mjs restore   (postpack)
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { publishedExports, readJson, root } from "./sync_exports.mjs";

const manifest = join(root, "package.json");
const backup = join(root, ".tmp", "package.json.source");

function restore() {
  if (!existsSync(backup)) return false;
  renameSync(backup, manifest);
  return true;
}

const command = process.argv[2];
if (command === "publish") {
  // A pack that died between prepack and postpack left the published form:
  // start again from the source form.
  if (restore()) console.log("pack_manifest: restored package.json left by an interrupted pack");
  mkdirSync(join(root, ".tmp"), { recursive: true });
  const text = readFileSync(manifest, "utf8");
  writeFileSync(backup, text);
  const pkg = JSON.parse(text);
  pkg.exports = { ...publishedExports(readJson("deno.json")), "./package.json": "./package.json" };
  // What users install: no repository scripts (npm would run a published
  // "test" or "prepack" in their tree) and no devDependencies.
  delete pkg.scripts;
  delete pkg.devDependencies;
  writeFileSync(manifest, JSON.stringify(pkg, null, 2) + "\n");
  console.log("pack_manifest: package.json exports point at dist/ until postpack");
} else if (command === "restore") {
  console.log(
    restore() ? "pack_manifest: package.json restored" : "pack_manifest: nothing to restore",
  );
} else {
  console.error("usage: node scripts/pack_manifest.mjs publish|restore");
  process.exit(2);
}
