// The one place that derives the export maps from deno.json "exports" (the
// source of truth):
// - package.json "exports" in the repository map each entry to its .ts source,
//   so our tests run on Bun and Node (tsx) with no build step;
// - the published package.json maps each entry to compiled JS plus .d.ts in
//   dist/ (written only while `npm pack` runs, see pack_manifest.mjs);
// - deno.json "imports" map the package's own name to the sources for Deno.
// It also derives which optional peer each entry needs from the module graph.
//
//   node scripts/sync_exports.mjs           write package.json and deno.json
//   node scripts/sync_exports.mjs --check   fail instead of writing (test gate)
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

/** The repository root. */
export const root = fileURLToPath(new URL("..", import.meta.url));

/** Where scripts/build.mjs emits the compiled package. */
export const distDir = "dist";

/** Reads a JSON file of the repository. */
export function readJson(name) {
  return JSON.parse(readFileSync(join(root, name), "utf8"));
}

/**
 * The entry points: subpath ("./libsql"), the specifier users import
 * ("@floret/engine/libsql"), the source ("./adapters/storage/libsql.ts") and
 * the compiled files under dist/.
 */
export function entryPoints(deno = readJson("deno.json")) {
  return Object.entries(deno.exports).map(([subpath, source]) => {
    const stem = `./${distDir}/${source.replace(/^\.\//, "").replace(/\.ts$/, "")}`;
    return {
      subpath,
      specifier: subpath === "." ? deno.name : `${deno.name}/${subpath.slice(2)}`,
      source,
      js: `${stem}.js`,
      dts: `${stem}.d.ts`,
    };
  });
}

/** package.json "exports" as kept in the repository: the .ts sources. */
export function sourceExports(deno = readJson("deno.json")) {
  return Object.fromEntries(entryPoints(deno).map((e) => [e.subpath, e.source]));
}

/**
 * package.json "exports" as published to npm: compiled ESM for every runtime
 * (Node 20 needs no loader; Bun and Deno take the same files), and the
 * declarations for TypeScript. "types" must come first to be seen.
 */
export function publishedExports(deno = readJson("deno.json")) {
  return Object.fromEntries(
    entryPoints(deno).map((e) => [e.subpath, { types: e.dts, default: e.js }]),
  );
}

/** deno.json "imports" entries that map the package's own name to its sources. */
export function denoSelfImports(deno = readJson("deno.json")) {
  return Object.fromEntries(entryPoints(deno).map((e) => [e.specifier, e.source]));
}

/** The npm package a bare specifier belongs to ("@a/b/c" → "@a/b", "x/y" → "x"). */
export function packageOf(specifier) {
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0];
}

/**
 * The packages each entry reaches through our own modules, static or dynamic
 * imports alike (read from `deno info`; node: built-ins excluded).
 *
 * @returns Map of subpath → sorted package names
 */
export function entryPackages(deno = readJson("deno.json")) {
  const deno_bin = join(root, "node_modules", ".bin", "deno");
  const ours = pathToFileURL(root).href;
  const result = new Map();
  for (const entry of entryPoints(deno)) {
    const out = execFileSync(deno_bin, ["info", "--json", entry.source], {
      cwd: root,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
    });
    const graph = JSON.parse(out.slice(out.indexOf("{")));
    const packages = new Set();
    for (const module of graph.modules) {
      if (!module.specifier.startsWith(ours) || module.specifier.includes("/node_modules/")) {
        continue;
      }
      for (const dependency of module.dependencies ?? []) {
        const specifier = dependency.specifier;
        if (/^(\.|\/|node:|file:|data:)/.test(specifier)) continue;
        const bare = specifier.startsWith("npm:")
          ? specifier.slice(4).replace(/(?<=.)@[^/]*$/, "") // npm:name@range
          : specifier;
        // Our adapters import public entries (e.g. @floret/engine/spi) by name.
        if (packageOf(bare) !== deno.name) packages.add(packageOf(bare));
      }
    }
    result.set(entry.subpath, [...packages].sort());
  }
  return result;
}

/**
 * Checks the dependency policy: the core's only hard dependencies are the
 * package.json "dependencies"; every other package an entry reaches is an
 * optional peer and, so that our own tests have it, a devDependency.
 *
 * @returns a list of problems (empty when all is well)
 */
export function dependencyProblems(pkg, packagesByEntry) {
  const problems = [];
  const hard = new Set(Object.keys(pkg.dependencies ?? {}));
  const peers = pkg.peerDependencies ?? {};
  for (const name of Object.keys(peers)) {
    // zod is the one required peer: the core needs it, and the host's copy must be the one used.
    if (name !== "zod" && pkg.peerDependenciesMeta?.[name]?.optional !== true) {
      problems.push(`peer ${name} is not marked optional in peerDependenciesMeta`);
    }
    if (!pkg.devDependencies?.[name]) {
      problems.push(`peer ${name} is not a devDependency, so our tests would not have it`);
    }
    if (hard.has(name)) problems.push(`${name} is both a dependency and a peer`);
  }
  for (const [subpath, packages] of packagesByEntry) {
    for (const name of packages) {
      if (!hard.has(name) && !(name in peers)) {
        problems.push(
          `entry ${subpath} imports ${name}, which is neither a dependency nor an optional peer`,
        );
      }
    }
  }
  const core = packagesByEntry.get(".") ?? [];
  const extra = core.filter((name) => name !== "zod");
  if (extra.length) problems.push(`the main entry reaches more than zod: ${extra.join(", ")}`);
  return problems;
}

/** The optional peers each entry needs, as lines for people. */
export function peerTable(pkg, packagesByEntry) {
  const peers = pkg.peerDependencies ?? {};
  return [...packagesByEntry].map(([subpath, packages]) => {
    const needed = packages.filter((name) => name in peers);
    return `  ${subpath.padEnd(14)} ${needed.length ? needed.join(", ") : "(no optional peer)"}`;
  });
}

const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

function main() {
  const deno = readJson("deno.json");
  const pkg = readJson("package.json");
  const packagesByEntry = entryPackages(deno);
  if (process.argv.includes("--check")) {
    const problems = [];
    if (same(pkg.exports, publishedExports(deno))) {
      problems.push(
        "package.json holds the published exports (an interrupted `npm pack`?): " +
          "run node scripts/pack_manifest.mjs restore",
      );
    } else if (!same(pkg.exports, sourceExports(deno))) {
      problems.push("package.json exports differ from deno.json exports");
    }
    const imports = Object.fromEntries(
      Object.entries(deno.imports ?? {}).filter(([k]) => k.startsWith(deno.name)),
    );
    if (!same(imports, denoSelfImports(deno))) {
      problems.push("deno.json imports do not map every export to its file");
    }
    if (pkg.name !== deno.name || pkg.version !== deno.version) {
      problems.push("name or version differs between package.json and deno.json");
    }
    problems.push(...dependencyProblems(pkg, packagesByEntry));
    if (problems.length) {
      console.error(problems.join("\n") + "\nRun: node scripts/sync_exports.mjs");
      process.exit(1);
    }
    console.log("export maps agree; optional peers per entry:");
  } else {
    pkg.exports = sourceExports(deno);
    pkg.version = deno.version;
    writeFileSync(join(root, "package.json"), JSON.stringify(pkg, null, 2) + "\n");
    deno.imports = {
      ...Object.fromEntries(
        Object.entries(deno.imports ?? {}).filter(([k]) => !k.startsWith(deno.name)),
      ),
      ...denoSelfImports(deno),
    };
    writeFileSync(join(root, "deno.json"), JSON.stringify(deno, null, 2) + "\n");
    console.log("package.json exports and deno.json imports written from deno.json exports");
    const problems = dependencyProblems(pkg, packagesByEntry);
    if (problems.length) console.error(problems.join("\n"));
    console.log("optional peers per entry:");
  }
  console.log(peerTable(pkg, packagesByEntry).join("\n"));
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
