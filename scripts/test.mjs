// The whole test gate (`npm test`): static checks, then the suite under Deno,
// Bun and Node. Every step runs even after a failure, so one run shows all
// problems; the exit code is non-zero if any step failed.
import { spawn } from "node:child_process";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { startPostgres } from "./postgres_server.mjs";

const bin = (name) => join("node_modules", ".bin", name);
const only = process.env.FLORET_TEST_ONLY?.split(",");

function listFiles(dir, predicate) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...listFiles(path, predicate));
    else if (predicate(path)) out.push(path);
  }
  return out.sort();
}

function run(cmd, args, env = {}, quiet = false) {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, {
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (d) => {
      output += d;
      if (!quiet) process.stdout.write(d);
    });
    child.stderr.on("data", (d) => {
      output += d;
      process.stderr.write(d);
    });
    child.on("close", (code) => resolve({ code: code ?? 1, output }));
    child.on("error", (error) => resolve({ code: 1, output: String(error) }));
  });
}

// deno:  "ok | 12 passed (3 steps) | 0 failed | 1 ignored"
// bun:   " 12 pass\n 0 fail"
// node:  "# pass 12\n# fail 0"
// deno-lint-ignore no-control-regex
const plain = (s) => s.replace(/\x1b\[[0-9;]*m/g, "");
const counters = {
  // Deno counts each top-level test, and the cases inside a describe block as its
  // steps: leaves = steps + top-level tests - describe blocks (the lines that open
  // a block end in "..." with no verdict).
  deno: (o) => {
    const text = plain(o);
    const m = [
      ...text.matchAll(/(\d+) passed(?: \((\d+) steps?\))? \| (\d+) failed(?: \((\d+) steps?\))?/g),
    ]
      .at(-1);
    if (!m) return null;
    const blocks = text.split("\n").filter((line) => /^\S.* \.\.\.$/.test(line)).length;
    const passed = m[2] === undefined ? +m[1] : +m[2] + +m[1] - blocks;
    return { passed, failed: +(m[4] ?? m[3]) };
  },
  bun: (o) => {
    const p = [...plain(o).matchAll(/^\s*(\d+) pass$/gm)].at(-1);
    const f = [...plain(o).matchAll(/^\s*(\d+) fail$/gm)].at(-1);
    return p && f ? { passed: +p[1], failed: +f[1] } : null;
  },
  node: (o) => {
    const p = [...plain(o).matchAll(/^# pass (\d+)$/gm)].at(-1);
    const f = [...plain(o).matchAll(/^# fail (\d+)$/gm)].at(-1);
    return p && f ? { passed: +p[1], failed: +f[1] } : null;
  },
};

const testFiles = listFiles("tests", (p) => p.endsWith(".test.ts"));
const results = [];
let failed = false;

async function step(name, cmd, args, env) {
  if (only && !only.includes(name)) return;
  console.log(`\n=== ${name}: ${cmd} ${args.join(" ")}`);
  const { code, output } = await run(cmd, args, env);
  const counts = counters[name]?.(output);
  if (code !== 0) failed = true;
  results.push({ name, code, counts });
}

function checkNeutralCore() {
  const offenders = [];
  for (const file of listFiles("src", (p) => p.endsWith(".ts") && !p.endsWith("_runtime.ts"))) {
    readFileSync(file, "utf8").split("\n").forEach((line, i) => {
      if (
        /from\s+["'](node:|npm:|jsr:)|import\(\s*["']node:|\bDeno\.|\bBun\.|\bprocess\.[A-Za-z]/
          .test(line)
      ) {
        offenders.push(`${file}:${i + 1}: ${line.trim()}`);
      }
    });
  }
  return offenders;
}

const entryPoints = Object.values(JSON.parse(readFileSync("deno.json", "utf8")).exports);

await step("exports", "node", ["scripts/sync_exports.mjs", "--check"]);
if (!only || only.includes("neutral-core")) {
  const offenders = checkNeutralCore();
  console.log("\n=== neutral-core: src/ uses no node:*, Deno.*, Bun.* or process.*");
  if (offenders.length) {
    console.error(offenders.join("\n"));
    failed = true;
  }
  results.push({ name: "neutral-core", code: offenders.length ? 1 : 0 });
}
if (!only || only.includes("core-deps")) {
  // Importing the engine must load zod and nothing else from outside: heavy
  // packages come only through their own subpath exports.
  console.log("\n=== core-deps: packages reachable from mod.ts");
  const info = await run(bin("deno"), ["info", "--json", "mod.ts"], {}, true);
  let bare = [];
  try {
    const graph = JSON.parse(info.output.slice(info.output.indexOf("{")));
    bare = [
      ...new Set(graph.modules.flatMap((m) => (m.dependencies ?? []).map((d) => d.specifier))),
    ]
      .filter((specifier) => !specifier.startsWith("."));
  } catch (error) {
    bare = [`(could not read the module graph: ${error})`];
  }
  // Adapters import the public `@floret/engine/spi` entry by name; a self-reference is local.
  const name = JSON.parse(readFileSync("deno.json", "utf8")).name;
  const self = (specifier) => specifier === name || specifier.startsWith(`${name}/`);
  const extra = bare.filter((specifier) => specifier !== "zod" && !self(specifier));
  if (extra.length || info.code !== 0) {
    console.error(`mod.ts reaches more than zod: ${extra.join(", ")}`);
    failed = true;
  }
  results.push({ name: "core-deps", code: extra.length || info.code !== 0 ? 1 : 0 });
}
await step("tsc", bin("tsc"), ["-p", "tsconfig.json"]);
await step("deno-check", bin("deno"), ["check", ...entryPoints]);
await step("lint", bin("deno"), ["lint"]);
await step("fmt", bin("deno"), ["fmt", "--check"]);
await step("publish", bin("deno"), ["publish", "--dry-run", "--allow-dirty"]);
// npm pack (which runs the build), then the tarball installed into scratch
// projects and imported under plain Node, Bun and Deno (scripts/check_package.mjs).
await step("package", "node", ["scripts/check_package.mjs"]);
// The PostgreSQL tests need a server: unless FLORET_POSTGRES_URL names one,
// start a throwaway cluster on loopback when PostgreSQL is installed (CI
// installs it); without one those tests skip and say why.
let postgres;
if (!process.env.FLORET_POSTGRES_URL && (!only || ["deno", "bun", "node"].some((s) => only.includes(s)))) {
  postgres = await startPostgres().catch((error) => ({ reason: String(error) }));
  if (postgres.url) process.env.FLORET_POSTGRES_URL = postgres.url;
  else console.log(`\n=== postgres: ${postgres.reason}; the PostgreSQL tests will skip`);
}
// Types are checked once by tsc above (tests included); deno test only runs them.
await step("deno", bin("deno"), ["test", "-A", "--no-check", ...testFiles]);
await step("bun", bin("bun"), ["test", ...testFiles.map((f) => "./" + f)]);
await step("node", process.execPath, [
  "--import",
  "tsx",
  "--test",
  "--test-concurrency=1",
  ...testFiles,
]);

postgres?.stop?.();
console.log("\n=== summary");
let passed = 0, failedTests = 0;
for (const r of results) {
  const verdict = r.code === 0 ? "ok" : `FAILED (exit ${r.code})`;
  if (r.counts) {
    passed += r.counts.passed;
    failedTests += r.counts.failed;
    console.log(`${r.name}: ${r.counts.passed} passed, ${r.counts.failed} failed (${verdict})`);
  } else console.log(`${r.name}: ${verdict}`);
}
console.log(`total: ${passed} passed, ${failedTests} failed`);
process.exit(failed ? 1 : 0);
