// The packaging gate (a step of `npm test`): packs the npm tarball the way
// `npm publish` would (prepack runs the build), then checks what users get:
// 1. the tarball holds dist/ JavaScript and .d.ts, README and LICENSE only,
//    with both files of every entry point;
// 2. a scratch project with the tarball alone (no optional peer) installs
//    nothing but the engine and its dependencies, imports every entry under
//    plain Node, Bun and Deno, runs a turn, and each adapter names its missing
//    package at first use;
// 3. a scratch project with every optional peer imports and uses every entry
//    under the three runtimes and type-checks against the .d.ts files;
// 4. a scratch Deno project that maps the package to the .ts sources (as a
//    JSR user gets them) runs the same probe and type-checks.
// Set FLORET_KEEP_PACK=1 to keep the scratch folders for inspection.
import { spawnSync } from "node:child_process";
import {
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, sep } from "node:path";
import { pathToFileURL } from "node:url";
import { entryPackages, entryPoints, readJson, root } from "./sync_exports.mjs";

const bin = (name) => join(root, "node_modules", ".bin", name);
const runtimes = [
  ["node", process.execPath, []],
  ["bun", bin("bun"), []],
  ["deno", bin("deno"), ["run", "-A"]],
];
let failures = 0;

const ok = (message) => console.log(`ok   ${message}`);
function fail(message, output = "") {
  failures++;
  console.log(`FAIL ${message}${output ? `\n${output.trimEnd()}` : ""}`);
}

function run(cmd, args, cwd, timeout = 300_000) {
  const result = spawnSync(cmd, args, { cwd, encoding: "utf8", timeout, maxBuffer: 64 << 20 });
  const output = `${result.stdout ?? ""}${result.stderr ?? ""}${result.error ?? ""}`;
  return { status: result.status ?? 1, stdout: result.stdout ?? "", output };
}

function writeJson(path, value) {
  writeFileSync(path, JSON.stringify(value, null, 2) + "\n");
}

const pkg = readJson("package.json");
const peers = Object.keys(pkg.peerDependencies ?? {});
const packagesByEntry = entryPackages();
const entries = entryPoints().map((e) => ({
  ...e,
  peers: (packagesByEntry.get(e.subpath) ?? []).filter((name) => peers.includes(name)),
}));
const probeEntries = entries.map(({ specifier, peers }) => ({ specifier, peers }));
const work = mkdtempSync(join(tmpdir(), "floret-pack-"));

// Top-level names the packing copy leaves out: installed packages (linked
// instead), git's store, build output and scratch files.
const NOT_COPIED = new Set(["node_modules", ".git", "dist", ".tmp", ".scratch", ".proto"]);

/**
 * A copy of the source tree to pack in. `npm pack` swaps package.json to its
 * published form for a moment and the build rewrites dist/: done in the
 * repository, that would pull the manifest from under the gate's other steps,
 * which run at the same time and resolve `@floret/engine` through it.
 */
function packingCopy() {
  const dir = join(work, "source");
  cpSync(root, dir, {
    recursive: true,
    filter: (source) => {
      const rel = relative(root, source);
      return !NOT_COPIED.has(rel.split(sep)[0]) && !/\.db(-\w+)?$/.test(rel);
    },
  });
  symlinkSync(join(root, "node_modules"), join(dir, "node_modules"), "dir");
  return dir;
}

/** Packs the tarball from a copy; its package.json must come back unchanged (postpack). */
function pack() {
  const source = packingCopy();
  const manifest = join(source, "package.json");
  const before = readFileSync(manifest, "utf8");
  const packed = run("npm", ["pack", "--json", "--pack-destination", work], source);
  if (readFileSync(manifest, "utf8") !== before) {
    fail("package.json was not restored after npm pack");
  }
  if (packed.status !== 0) {
    fail("npm pack (with the prepack build) failed", packed.output);
    return undefined;
  }
  // Lifecycle scripts print before npm's JSON report.
  const report = JSON.parse(packed.stdout.slice(packed.stdout.search(/^\[$/m)));
  ok(
    `npm pack built and packed ${report[0].filename}: ${report[0].files.length} files, ` +
      `${report[0].size} bytes packed, ${report[0].unpackedSize} unpacked`,
  );
  return { tarball: join(work, report[0].filename), files: report[0].files.map((f) => f.path) };
}

/** The tarball holds what users need and nothing else (npm's own file list). */
function checkContents(files) {
  const allowed = (f) =>
    ["package.json", "README.md", "LICENSE"].includes(f) || /^docs\/[A-Za-z0-9-]+\.md$/.test(f) ||
    /^dist\/.*(?<!\.d)\.js$/.test(f) || /^dist\/.*\.d\.ts$/.test(f);
  const extra = files.filter((f) => !allowed(f));
  if (extra.length) fail(`tarball carries files users do not need:\n  ${extra.join("\n  ")}`);
  else ok(`tarball holds only dist/*.js, dist/*.d.ts, README.md, docs/*.md, LICENSE, package.json`);
  // The README's guide links are relative: the guides must travel with it.
  if (!files.includes("docs/README.md")) fail("tarball lacks the guides (docs/*.md)");
  const leaked = files.filter((f) => /(^|\/)(tests|bench|examples|scripts)\//.test(f));
  if (leaked.length) fail(`tarball carries tests, benchmarks or examples: ${leaked.join(", ")}`);
  const missing = entries.flatMap((e) => [e.js, e.dts]).map((f) => f.slice(2))
    .filter((f) => !files.includes(f));
  if (missing.length) fail(`tarball lacks entry files: ${missing.join(", ")}`);
  else ok(`every entry point has its .js and .d.ts (${entries.length} entries)`);
}

/** The installed package.json and README, as npm unpacked them from the tarball. */
function checkInstalledManifest(dir) {
  const installed = join(dir, "node_modules", ...pkg.name.split("/"));
  const published = JSON.parse(readFileSync(join(installed, "package.json"), "utf8"));
  const wrong = entries.filter(({ subpath, js, dts }) => {
    const target = published.exports?.[subpath];
    return target?.types !== dts || target?.default !== js;
  });
  if (wrong.length) {
    fail(`published exports do not point at dist/: ${wrong.map((e) => e.subpath).join(", ")}`);
  } else ok("published exports map every entry to dist/ (types, then default)");
  const missingFields = ["repository", "homepage", "keywords", "sideEffects"]
    .filter((field) => published[field] === undefined);
  if (missingFields.length) fail(`published package.json lacks ${missingFields.join(", ")}`);
  if (published.exports?.["./package.json"] !== "./package.json") {
    fail("published package.json has no ./package.json export");
  }
  if (published.scripts || published.devDependencies) {
    fail("published package.json carries the repository's scripts or devDependencies");
  }
  if (!missingFields.length && !published.scripts && !published.devDependencies) {
    ok(
      "published package.json: repository, homepage, keywords, sideEffects, ./package.json; no scripts",
    );
  }
  // The maintainers' sources sit in a sibling folder of the repository; users never have it.
  // Spelled from parts so a search of the repository for paths outside it finds no hit here.
  const sibling = ["..", "shared"].join("/");
  if (readFileSync(join(installed, "README.md"), "utf8").includes(sibling)) {
    fail(`README.md points at ${sibling}, which users do not have`);
  }
}

function scratchProject(name) {
  const dir = join(work, name);
  mkdirSync(dir);
  writeJson(join(dir, "package.json"), { name: `scratch-${name}`, private: true, type: "module" });
  for (const file of ["package_probe.mjs", "package_types_probe.ts", "package_kv_probe.mjs"]) {
    copyFileSync(join(root, "scripts", file), join(dir, file));
  }
  return dir;
}

function npmInstall(dir, specs) {
  const args = ["install", ...specs, "--prefer-offline", "--no-audit", "--no-fund"];
  const installed = run("npm", [...args, "--loglevel=error"], dir);
  if (installed.status !== 0) fail(`npm install in ${dir}`, installed.output);
  return installed.status === 0;
}

function probe(dir, mode, label, which = runtimes) {
  writeJson(join(dir, "probe.json"), { mode, entries: probeEntries });
  for (const [name, cmd, args] of which) {
    const result = run(cmd, [...args, "package_probe.mjs"], dir);
    const checks = result.stdout.split("\n").filter((l) => /^(ok|FAIL) /.test(l)).length;
    if (result.status === 0 && checks > 0) ok(`${label} under ${name}: ${checks} checks`);
    else fail(`${label} under ${name}`, result.output);
  }
}

/** kvConformance's random cases need fast-check: they name it when it is missing. */
function kvProbe(dir, withPeers) {
  const result = run(process.execPath, ["--test", "package_kv_probe.mjs"], dir);
  if (withPeers) {
    if (result.status === 0) ok("kvConformance runs under node --test with fast-check");
    else fail("kvConformance with fast-check", result.output);
  } else if (result.status !== 0 && result.output.includes("npm install fast-check")) {
    ok("kvConformance without fast-check names the package to install");
  } else {
    fail("kvConformance without fast-check did not say to install it", result.output);
  }
}

function topLevelPackages(dir) {
  const modules = join(dir, "node_modules");
  return readdirSync(modules).filter((n) => !n.startsWith(".")).flatMap((n) =>
    n.startsWith("@") ? readdirSync(join(modules, n)).map((s) => `${n}/${s}`) : [n]
  );
}

function bareProject(tarball) {
  const dir = scratchProject("bare");
  if (!npmInstall(dir, [tarball])) return;
  checkInstalledManifest(dir);
  const installed = topLevelPackages(dir);
  // zod is a required peer (npm installs it); the others are optional and must not come.
  const optional = peers.filter((p) => pkg.peerDependenciesMeta?.[p]?.optional);
  const present = optional.filter((p) => installed.includes(p));
  if (present.length) fail(`optional peers were installed: ${present.join(", ")}`);
  else {
    ok(`installing the tarball alone adds ${installed.length} packages: ${installed.join(", ")}`);
  }
  probe(dir, "bare", "without optional peers");
  kvProbe(dir, false);
}

function fullProject(tarball) {
  const dir = scratchProject("full");
  const specs = peers.map((p) => `${p}@${pkg.devDependencies[p]}`);
  if (!npmInstall(dir, [tarball, ...specs])) return;
  probe(dir, "full", "with every optional peer");
  kvProbe(dir, true);
  writeJson(join(dir, "tsconfig.json"), {
    compilerOptions: {
      target: "ES2022",
      module: "NodeNext",
      moduleResolution: "NodeNext",
      lib: ["ES2023", "DOM", "DOM.Iterable"],
      types: [],
      strict: true,
      exactOptionalPropertyTypes: true,
      noEmit: true,
      // The published .d.ts themselves are checked, as a consumer with tsc --init's defaults does.
      skipLibCheck: false,
    },
    // tests/types/options_undefined.ts: every option takes `undefined` (an unset env variable).
    files: ["package_types_probe.ts", "options_undefined.ts"],
  });
  copyFileSync(
    join(root, "tests", "types", "options_undefined.ts"),
    join(dir, "options_undefined.ts"),
  );
  const tsc = run(bin("tsc"), ["-p", "tsconfig.json"], dir);
  if (tsc.status === 0) {
    ok(
      "TypeScript (NodeNext, strict, exactOptionalPropertyTypes, skipLibCheck: false) type-checks every entry",
    );
  } else fail("tsc against the packed .d.ts files", tsc.output);
  browserClientBundle(dir);
  const denoCheck = run(bin("deno"), ["check", "package_types_probe.ts"], dir);
  if (denoCheck.status === 0) ok("deno check accepts every entry's .d.ts from node_modules");
  else fail("deno check against the packed .d.ts files", denoCheck.output);
}

/** The most a browser bundle of `threadClient` alone may weigh, minified (DESIGN §11). */
const CLIENT_BUNDLE_LIMIT = 50 * 1024;

/**
 * Bundles `threadClient` from the installed package for the browser with
 * esbuild: at most 50 KB minified, and without zod (the client checks what
 * the server sends with small hand checks).
 */
function browserClientBundle(dir) {
  writeFileSync(
    join(dir, "client_entry.mjs"),
    `export { threadClient } from "${pkg.name}/http";\n`,
  );
  const script = `
    const esbuild = await import(${
    JSON.stringify(pathToFileURL(join(root, "node_modules", "esbuild", "lib", "main.js")).href)
  });
    const result = await esbuild.build({
      entryPoints: ["client_entry.mjs"], bundle: true, minify: true, format: "esm",
      platform: "browser", write: false, metafile: true, logLevel: "error",
    });
    // What reaches the output (files esbuild read but shook out entirely do not count).
    const inputs = Object.entries(Object.values(result.metafile.outputs)[0].inputs);
    console.log(JSON.stringify({ bytes: result.outputFiles[0].contents.length,
      zod: inputs.filter(([input, { bytesInOutput }]) =>
        input.includes("node_modules/zod/") && bytesInOutput > 0).length }));`;
  const bundled = run(process.execPath, ["--input-type=module", "-e", script], dir);
  if (bundled.status !== 0) return fail("esbuild could not bundle threadClient", bundled.output);
  const { bytes, zod } = JSON.parse(bundled.stdout.trim().split("\n").at(-1));
  const size = `${(bytes / 1024).toFixed(1)} KB`;
  if (bytes > CLIENT_BUNDLE_LIMIT) fail(`threadClient bundles to ${size} minified (limit 50 KB)`);
  else if (zod > 0) fail(`threadClient's browser bundle includes zod (${zod} files)`);
  else ok(`threadClient bundles for the browser to ${size} minified, without zod (esbuild)`);
}

/** A Deno project that maps the package to the repository's .ts sources, as JSR serves them. */
function denoSourceProject() {
  const dir = scratchProject("deno-source");
  const deno = readJson("deno.json");
  writeJson(join(dir, "deno.json"), {
    nodeModulesDir: "manual",
    imports: Object.fromEntries(entries.map((e) => [e.specifier, join(root, e.source)])),
  });
  // The npm packages the sources import (Deno fetches them itself for a JSR
  // user); taken from our node_modules so the check needs no network.
  // The @types packages our sources' types rely on come along (turndown's
  // types, for one, bring the DOM names html_markdown.ts uses).
  const types = Object.keys(pkg.devDependencies ?? {}).filter((n) => n.startsWith("@types/"));
  const dependencies = Object.fromEntries(
    [...Object.keys(pkg.dependencies ?? {}), ...peers, ...types].map((name) => [
      name,
      pkg.dependencies?.[name] ?? pkg.devDependencies[name],
    ]),
  );
  writeJson(join(dir, "package.json"), { private: true, type: "module", dependencies });
  symlinkSync(join(root, "node_modules"), join(dir, "node_modules"), "dir");
  probe(dir, "full", `Deno on the sources (${deno.name}@${deno.version} as JSR serves it)`, [
    runtimes[2],
  ]);
  const checked = run(bin("deno"), ["check", "package_types_probe.ts"], dir);
  if (checked.status === 0) ok("deno check accepts every entry from the sources");
  else fail("deno check on the sources", checked.output);
}

try {
  const { tarball, files } = pack() ?? {};
  if (tarball && existsSync(tarball)) {
    checkContents(files);
    bareProject(tarball);
    fullProject(tarball);
  }
  denoSourceProject();
} finally {
  if (process.env.FLORET_KEEP_PACK) console.log(`scratch folders kept in ${work}`);
  else rmSync(work, { recursive: true, force: true });
}
console.log(failures ? `package: ${failures} check(s) failed` : "package: all checks passed");
process.exit(failures ? 1 : 0);
