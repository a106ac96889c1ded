// Builds the npm package: compiled ESM JavaScript and .d.ts files in dist/,
// from the same .ts sources Deno and JSR use. Runs on `npm pack` (prepack).
//
// Only the entry points' module graphs are compiled: the build config gets
// the entries from deno.json, so a new export needs no change here. Relative
// imports end in .ts in the sources; rewriteRelativeImportExtensions makes
// the emitted JavaScript import .js (declarations keep .ts, which TypeScript
// 5 and later resolve to the .d.ts next to it).
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { distDir, entryPoints, root } from "./sync_exports.mjs";

const scratch = join(root, ".tmp");
const config = join(scratch, "tsconfig.entries.json");

function filesUnder(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

const entries = entryPoints();
rmSync(join(root, distDir), { recursive: true, force: true });
mkdirSync(scratch, { recursive: true });
// Paths in a config are relative to that config's own folder.
writeFileSync(
  config,
  JSON.stringify(
    {
      extends: "../tsconfig.build.json",
      files: entries.map((e) => join("..", e.source)),
      include: [],
    },
    null,
    2,
  ) + "\n",
);

const tsc = spawnSync(join(root, "node_modules", ".bin", "tsc"), ["-p", config], {
  cwd: root,
  stdio: "inherit",
});
if (tsc.status !== 0) {
  console.error(`build: tsc failed (exit ${tsc.status ?? tsc.signal})`);
  process.exit(1);
}

const missing = entries.flatMap((e) => [e.js, e.dts]).filter((f) => !existsSync(join(root, f)));
if (missing.length) {
  console.error(`build: entry files missing after tsc:\n${missing.join("\n")}`);
  process.exit(1);
}
const files = filesUnder(join(root, distDir));
const bytes = files.reduce((sum, f) => sum + statSync(f).size, 0);
console.log(
  `build: ${entries.length} entry points, ${files.length} files, ${bytes} bytes in ${distDir}/`,
);
