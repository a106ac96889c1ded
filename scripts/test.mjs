// The whole test gate (`npm test`): static checks, the package check, and the
// suite under Deno, Bun and Node. Steps run side by side (most of the suite's
// time is spent waiting on timers, child processes and sockets, not on the
// CPU); each writes its full output to .tmp/gate/<step>.log, and the console
// gets one line per step and a summary: per runtime passed / failed / skipped,
// each skip with its reason, each step's duration, and the first lines of
// every failure repeated at the very end. Every step runs even after a
// failure; the exit code is non-zero if any failed.
//
//   npm test                              everything
//   npm test -- tests/foo.test.ts         these files under the three runtimes only
//   FLORET_TEST_ONLY=tsc,node npm test    only the named steps
//   FLORET_TEST_JOBS=1 npm test           one step at a time
import { spawn, spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { startPostgres } from "./postgres_server.mjs";
import { bunReport, denoReport, firstLines, nodeReport } from "./test_reports.mjs";

const bin = (name) => join("node_modules", ".bin", name);
const LOGS = join(".tmp", "gate");
const NAMES = [
  "exports",
  "neutral-core",
  "core-deps",
  "tsc",
  "docs",
  "deno-check",
  "doc-lint",
  "lint",
  "fmt",
  "publish",
  "package",
  "deno",
  "bun",
  "node",
];
const RUNTIMES = ["deno", "bun", "node"];
const chosenFiles = process.argv.slice(2);
const only = process.env.FLORET_TEST_ONLY?.split(",").map((s) => s.trim()).filter(Boolean) ??
  (chosenFiles.length ? RUNTIMES : undefined);
const unknown = (only ?? []).filter((name) => !NAMES.includes(name));
if (unknown.length) {
  console.error(`FLORET_TEST_ONLY names no step ${unknown.join(", ")}; steps: ${NAMES.join(", ")}`);
  process.exit(2);
}
// Node's own test files run this many at a time (each in its own process).
const jobs = Math.max(1, Number(process.env.FLORET_TEST_JOBS) || NAMES.length);

function listFiles(dir, predicate) {
  const out = [];
  for (const name of readdirSync(dir)) {
    if (name === "node_modules") continue; // tests/ai_sdk's own packages ship tests of their own
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...listFiles(path, predicate));
    else if (predicate(path)) out.push(path);
  }
  return out.sort();
}

// The real AI SDK client (ai@7 wants Node >= 22) has a package of its own, so the
// root install stays free of EBADENGINE on Node 20: tests/ai_sdk/chat.ts says more.
if (
  (!only || RUNTIMES.some((name) => only.includes(name))) &&
  !existsSync("tests/ai_sdk/node_modules/ai/package.json")
) {
  const install = spawnSync("npm", [
    "ci",
    "--prefix",
    "tests/ai_sdk",
    "--loglevel=error",
    "--no-audit",
    "--no-fund",
  ], { stdio: "inherit" });
  if (install.status !== 0) {
    console.log("tests/ai_sdk: npm ci failed; the AI SDK client tests will fail");
  }
}

const testFiles = chosenFiles.length
  ? chosenFiles
  : listFiles("tests", (p) => p.endsWith(".test.ts"));
const entryPoints = Object.values(JSON.parse(readFileSync("deno.json", "utf8")).exports);
const log = (name, ext = "log") => join(LOGS, `${name}.${ext}`);

/** Runs a command with its output (stdout and stderr together) kept in memory and in a log. */
function exec(name, cmd, args, env = {}) {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, {
      // The logs are files: no colour codes in them.
      env: { ...process.env, NO_COLOR: "1", FORCE_COLOR: "0", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const chunks = [];
    child.stdout.on("data", (d) => chunks.push(d));
    child.stderr.on("data", (d) => chunks.push(d));
    const done = (code, extra = "") => {
      const output = Buffer.concat(chunks).toString("utf8") + extra;
      writeFileSync(log(name), output);
      resolve({ code, output });
    };
    child.on("close", (code, signal) => done(code ?? 1, signal ? `\nkilled by ${signal}\n` : ""));
    child.on("error", (error) => done(1, `\n${error}\n`));
  });
}

const readIfThere = (path) => {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return "";
  }
};

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
  return { code: offenders.length ? 1 : 0, output: offenders.join("\n") };
}

// Importing the engine must load zod and nothing else from outside: heavy
// packages come only through their own subpath exports.
async function checkCoreDeps() {
  const info = await exec("core-deps", bin("deno"), ["info", "--json", "mod.ts"]);
  let bare = [];
  try {
    const graph = JSON.parse(info.output.slice(info.output.indexOf("{")));
    bare = [
      ...new Set(graph.modules.flatMap((m) => (m.dependencies ?? []).map((d) => d.specifier))),
    ].filter((specifier) => !specifier.startsWith("."));
  } catch (error) {
    bare = [`(could not read the module graph: ${error})`];
  }
  // Adapters import the public `@floret/engine/spi` entry by name; a self-reference is local.
  const name = JSON.parse(readFileSync("deno.json", "utf8")).name;
  const self = (specifier) => specifier === name || specifier.startsWith(`${name}/`);
  const extra = bare.filter((specifier) => specifier !== "zod" && !self(specifier));
  const failed = extra.length > 0 || info.code !== 0;
  return { code: failed ? 1 : 0, output: failed ? `mod.ts reaches more than zod: ${extra}` : "" };
}

const files = `${testFiles.length} test file${testFiles.length === 1 ? "" : "s"}`;

// Node's runner starts one process per file, and under tsx every process loads
// and transforms the engine's module graph again: about a second of CPU per
// file, more than most files' own tests, and on two cores it made the node step
// the gate's long pole. So the whole suite runs as NODE_SHARDS shard modules,
// each importing its share of the files (one process, one module load), the
// shards side by side. Bun already runs every file in one process, so no file
// relies on a process of its own. The shares are balanced by each file's time
// in an earlier gate (scripts/test_weights.json, seconds; refresh it from
// .tmp/gate/durations.tsv when files are added — an unknown file counts 1 s).
// A few chosen files still run one process each.
const NODE_SHARDS = Number(process.env.FLORET_NODE_SHARDS) || 4;
// deno test --parallel: files at a time (DENO_JOBS); see the deno step.
const DENO_JOBS = Number(process.env.FLORET_DENO_JOBS) || 3;
// bun test runs its files one after another in one process, and most of their
// time is waiting; two bun processes with half the files each overlap it.
const BUN_SHARDS = testFiles.length > 8 ? Number(process.env.FLORET_BUN_SHARDS) || 2 : 1;

/** `files` with the heaviest (by scripts/test_weights.json) first. */
function heaviestFirst(files) {
  const weights = JSON.parse(readFileSync("scripts/test_weights.json", "utf8"));
  return [...files].sort((a, b) => (weights[b] ?? 1) - (weights[a] ?? 1));
}

/** Splits files into n shares of about equal weight (heaviest first, each to the lightest share). */
function balance(files, n) {
  const weights = JSON.parse(readFileSync("scripts/test_weights.json", "utf8"));
  const shards = Array.from({ length: n }, () => ({ seconds: 0, files: [] }));
  for (const file of heaviestFirst(files)) {
    const lightest = shards.reduce((min, shard) => (shard.seconds < min.seconds ? shard : min));
    lightest.seconds += weights[file] ?? 1;
    lightest.files.push(file);
  }
  return shards;
}

/** The bun shards' reports as one: counts added up, skips, durations and errors side by side. */
function mergeReports(reports) {
  if (reports.some((report) => report === null)) return null;
  return {
    passed: reports.reduce((sum, r) => sum + r.passed, 0),
    failed: reports.reduce((sum, r) => sum + r.failed, 0),
    skipped: reports.reduce((sum, r) => sum + r.skipped, 0),
    skips: reports.flatMap((r) => r.skips),
    durations: reports.flatMap((r) => r.durations),
    errors: reports.flatMap((r) => r.errors),
  };
}
let bunRuns = [];
function nodeShards() {
  if (testFiles.length <= NODE_SHARDS * 2) return testFiles;
  const shards = balance(testFiles, NODE_SHARDS);
  const dir = join(LOGS, "node-shards");
  mkdirSync(dir, { recursive: true });
  return shards.map((shard, i) => {
    const path = join(dir, `shard-${i + 1}.mjs`);
    const imports = shard.files.sort().map((file) =>
      `import ${JSON.stringify(pathToFileURL(resolve(file)).href)};`
    );
    writeFileSync(
      path,
      `// ${shard.files.length} test files, about ${Math.round(shard.seconds)} s\n${
        imports.join("\n")
      }\n`,
    );
    return path;
  });
}
/** Every step: what it checks (printed instead of its command line) and how to run it. */
const steps = [
  // The runtimes first: they take longest, so they start first.
  {
    name: "node",
    what: `${files} under node --test (${NODE_SHARDS} processes side by side)`,
    run: () =>
      exec("node", process.execPath, [
        "--import",
        "tsx",
        "--test",
        `--test-concurrency=${NODE_SHARDS}`,
        "--test-reporter=dot",
        "--test-reporter-destination=stdout",
        "--test-reporter=./scripts/node_test_events.mjs",
        `--test-reporter-destination=${log("node", "jsonl")}`,
        ...nodeShards(),
      ]),
    report: (output) => nodeReport(readIfThere(log("node", "jsonl")), output),
  },
  {
    name: "deno",
    what: `${files} under deno test (${DENO_JOBS} files at a time)`,
    // Types are checked once by tsc (tests included); deno test only runs them.
    // Several modules at a time: between its tests Deno spends its time loading the next
    // module, and the long files mostly wait. Heaviest first, so no long file starts last.
    run: () =>
      exec("deno", bin("deno"), [
        "test",
        "-A",
        "--no-check",
        "--parallel",
        ...heaviestFirst(testFiles),
      ], { DENO_JOBS: String(DENO_JOBS) }),
    report: (output) => denoReport(output),
  },
  {
    name: "bun",
    what: `${files} under bun test (${BUN_SHARDS} processes side by side)`,
    run: async () => {
      const shards = BUN_SHARDS === 1 ? [{ files: testFiles }] : balance(testFiles, BUN_SHARDS);
      bunRuns = await Promise.all(shards.map((shard, i) =>
        exec(`bun-${i + 1}`, bin("bun"), [
          "test",
          // Bun alone gives each test 5 s unless it says otherwise (node and deno
          // give no limit), which a loaded machine overruns; tests that need a
          // bound set their own.
          "--timeout=30000",
          "--only-failures",
          "--reporter=junit",
          `--reporter-outfile=${log(`bun-${i + 1}`, "xml")}`,
          ...[...shard.files].sort().map((
            f,
          ) => (f.startsWith(".") || f.startsWith("/") ? f : `./${f}`)),
        ])
      ));
      const output = bunRuns.map((run) => run.output).join("\n");
      writeFileSync(log("bun"), output);
      return { code: bunRuns.find((run) => run.code !== 0)?.code ?? 0, output };
    },
    report: () =>
      mergeReports(
        bunRuns.map((run, i) => bunReport(run.output, readIfThere(log(`bun-${i + 1}`, "xml")))),
      ),
  },
  {
    name: "package",
    what: "npm pack, then the tarball installed and imported under Node, Bun and Deno",
    run: () => exec("package", "node", ["scripts/check_package.mjs"]),
  },
  {
    name: "tsc",
    what: "TypeScript type-checks sources, tests, examples, bench and scripts",
    run: () => exec("tsc", bin("tsc"), ["-p", "tsconfig.json"]),
  },
  {
    name: "docs",
    what: "every TypeScript block of README.md and docs/ compiles",
    run: () => exec("docs", "node", ["scripts/check_docs.mjs"]),
  },
  {
    name: "publish",
    what: "deno publish --dry-run: what JSR would receive, slow types",
    run: () => exec("publish", bin("deno"), ["publish", "--dry-run", "--allow-dirty"]),
  },
  {
    name: "deno-check",
    what: `deno check of the ${entryPoints.length} entry points`,
    run: () => exec("deno-check", bin("deno"), ["check", ...entryPoints]),
  },
  {
    name: "doc-lint",
    // Each entry alone (its docs complete without the others': an entry
    // re-exports the engine types it takes and returns), one after another.
    what:
      `deno doc --lint of each of the ${entryPoints.length} entry points (JSR's documentation checks)`,
    run: async () => {
      let code = 0, output = "";
      for (const entry of entryPoints) {
        const result = await exec("doc-lint", bin("deno"), ["doc", "--lint", entry]);
        code ||= result.code;
        // Deno's warnings about @types/node it cannot resolve are noise here.
        const lines = result.output.split("\n").filter((line) =>
          !/^(Warning|\s+at) /.test(line) && !line.includes("Failed resolving types")
        );
        output += `--- ${entry}: exit ${result.code}\n${lines.join("\n")}\n`;
      }
      writeFileSync(log("doc-lint"), output);
      return { code, output };
    },
  },
  { name: "lint", what: "deno lint", run: () => exec("lint", bin("deno"), ["lint"]) },
  {
    name: "fmt",
    what: "deno fmt --check",
    run: () => exec("fmt", bin("deno"), ["fmt", "--check"]),
  },
  {
    name: "exports",
    what: "package.json and deno.json export the same entries",
    run: () => exec("exports", "node", ["scripts/sync_exports.mjs", "--check"]),
  },
  {
    name: "neutral-core",
    what: "src/ uses no node:*, Deno.*, Bun.* or process.*",
    run: () => Promise.resolve(checkNeutralCore()),
  },
  { name: "core-deps", what: "mod.ts reaches no package but zod", run: checkCoreDeps },
].filter((step) => !only || only.includes(step.name));

const clock = (ms) => {
  const s = Math.round(ms / 1000);
  return s < 60 ? `${s}s` : `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`;
};

rmSync(LOGS, { recursive: true, force: true });
mkdirSync(LOGS, { recursive: true });
const started = Date.now();
const running = new Map();
const results = [];
console.log(`test gate: ${steps.length} steps, up to ${jobs} at a time; full logs in ${LOGS}/`);

async function runStep(step) {
  const begin = Date.now();
  running.set(step.name, begin);
  console.log(`start ${step.name}: ${step.what}`);
  const { code, output } = await step.run();
  const ms = Date.now() - begin;
  running.delete(step.name);
  const report = step.report?.(output) ?? null;
  // A runtime that ran no test or left no counts failed, whatever its exit code.
  const ok = code === 0 && (!step.report || (report !== null && report.failed === 0));
  const counts = report
    ? `: ${report.passed} passed, ${report.failed} failed, ${report.skipped} skipped`
    : "";
  console.log(`${ok ? "ok  " : "FAIL"}  ${step.name}${counts} (${clock(ms)})`);
  const errors = ok ? [] : report?.errors?.length ? report.errors : firstLines(output);
  results.push({ step, code, ok, ms, report, errors });
}

const heartbeat = setInterval(() => {
  const names = [...running].map(([name, begin]) => `${name} ${clock(Date.now() - begin)}`);
  if (names.length) console.log(`... ${clock(Date.now() - started)}: running ${names.join(", ")}`);
}, 60_000);

// The PostgreSQL tests need a server: unless FLORET_POSTGRES_URL names one,
// start a throwaway cluster on loopback when PostgreSQL is installed (.ci/run
// installs it); without one those tests skip and say why.
let postgres;
if (!process.env.FLORET_POSTGRES_URL && steps.some((step) => RUNTIMES.includes(step.name))) {
  postgres = await startPostgres().catch((error) => ({ reason: String(error) }));
  if (postgres.url) process.env.FLORET_POSTGRES_URL = postgres.url;
  else console.log(`postgres: ${postgres.reason}; the PostgreSQL tests will skip`);
}

const queue = [...steps];
await Promise.all(
  Array.from({ length: Math.min(jobs, queue.length) }, async () => {
    while (queue.length) await runStep(queue.shift());
  }),
);
clearInterval(heartbeat);
postgres?.stop?.();

// Per-file durations, slowest first, for whoever wants the gate faster.
const durations = results.filter((r) => r.report?.durations?.length).flatMap((r) =>
  r.report.durations.map((d) => `${r.step.name}\t${(d.ms / 1000).toFixed(1)}s\t${d.file}`)
    .sort((a, b) => parseFloat(b.split("\t")[1]) - parseFloat(a.split("\t")[1]))
);
writeFileSync(join(LOGS, "durations.tsv"), durations.join("\n") + "\n");

console.log(`\n=== summary (${clock(Date.now() - started)} in all)`);
let passed = 0, failed = 0, skipped = 0;
for (const name of NAMES) {
  const r = results.find((result) => result.step.name === name);
  if (!r) continue;
  const verdict = r.ok ? "ok" : `FAILED (exit ${r.code})`;
  if (r.report) {
    passed += r.report.passed;
    failed += r.report.failed;
    skipped += r.report.skipped;
    console.log(
      `${name}: ${r.report.passed} passed, ${r.report.failed} failed, ${r.report.skipped} skipped, ${
        clock(r.ms)
      } (${verdict})`,
    );
    for (const skip of r.report.skips) {
      console.log(`  skipped ${skip.count} in ${skip.where}: ${skip.reason}`);
    }
  } else if (RUNTIMES.includes(name)) {
    console.log(`${name}: no test counts found, ${clock(r.ms)} (${verdict}); see ${log(name)}`);
  } else console.log(`${name}: ${verdict}, ${clock(r.ms)}`);
}
const failures = results.filter((r) => !r.ok);
for (const r of failures) {
  console.log(`\n=== ${r.step.name} failed: first lines (all of it in ${log(r.step.name)})`);
  console.log(r.errors.length ? r.errors.join("\n") : "(no output)");
}
const failedSteps = failures.length
  ? `; ${failures.length} step${failures.length === 1 ? "" : "s"} failed (${
    failures.map((r) => r.step.name).join(", ")
  })`
  : "";
console.log(`\ntotal: ${passed} passed, ${failed} failed, ${skipped} skipped${failedSteps}`);
process.exit(failures.length ? 1 : 0);
