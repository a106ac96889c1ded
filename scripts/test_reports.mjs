// Reads what each test runner wrote (scripts/test.mjs keeps it in files) and
// answers the same questions for all three: how many tests passed, failed and
// were skipped, why each skip happened, how long each file took, and the first
// lines that explain a failure. The runners differ:
// - node --test: JSON lines from scripts/node_test_events.mjs (counts, skips
//   with their reasons, files, times) and the dot reporter's "Failed tests:"
//   section for the errors;
// - deno test: the pretty reporter, one verdict line per test and step, and an
//   " ERRORS " section; it prints no skip reason;
// - bun test: `--only-failures` output (errors, then " N pass / N skip / N fail")
//   and a JUnit file (per-file skipped counts and times); no skip reason either.
// Deno and Bun skips get their reasons from the `floret-skip:` lines that
// tests/support/skip.ts writes.

/** The most error lines repeated for one failing step. */
export const ERROR_LINES = 20;

// deno-lint-ignore no-control-regex
const ANSI = /\x1b\[[0-9;?]*[A-Za-z]/g;

/** Text without terminal colour codes (a runner may colour even with NO_COLOR). */
export const plain = (text) => text.replace(ANSI, "");

/** `floret-skip: <file>: <reason>` lines, as a Map of file to its reasons. */
export function skipMarks(text) {
  const marks = new Map();
  for (const [, file, reason] of plain(text).matchAll(/^floret-skip: (\S+): (.+)$/gm)) {
    const reasons = marks.get(file) ?? new Set();
    reasons.add(reason.trim());
    marks.set(file, reasons);
  }
  return marks;
}

/**
 * Skips grouped by file (deno, bun) with the reasons the file told; a file
 * that skipped without telling why is said to have given none.
 */
function skipsByFile(counts, marks, runtime) {
  const skips = [];
  for (const [file, count] of counts) {
    if (count === 0) continue;
    const reasons = [...(marks.get(file) ?? [])];
    skips.push({
      count,
      where: file,
      reason: reasons.length ? reasons.join("; ") : `(no reason given: ${runtime} prints none)`,
    });
  }
  return skips;
}

/** First lines after a heading line matching `start`, blank lines dropped. */
function linesAfter(text, start, limit = ERROR_LINES) {
  const lines = plain(text).split("\n");
  const at = lines.findIndex((line) => start.test(line));
  if (at < 0) return [];
  return lines.slice(at + 1).filter((line) => line.trim() !== "").slice(0, limit);
}

/** First non-blank lines of a static step's output, minus its success chatter. */
export function firstLines(text, limit = ERROR_LINES) {
  return plain(text).split("\n")
    .filter((line) => line.trim() !== "" && !/^(ok |Check |Checked \d)/.test(line.trim()))
    .slice(0, limit);
}

/**
 * node --test: counts from its closing diagnostics ("pass 12"), skips and
 * per-file durations from the events scripts/node_test_events.mjs wrote, errors
 * from the dot reporter's "Failed tests:" section.
 */
export function nodeReport(eventLines, dots) {
  const events = eventLines.split("\n").filter(Boolean).flatMap((line) => {
    try {
      return [JSON.parse(line)];
    } catch {
      return [];
    }
  });
  const totals = new Map();
  for (const event of events) {
    const total = event.type === "diagnostic" && /^(\w+) (\d+)$/.exec(event.message);
    if (total) totals.set(total[1], Number(total[2]));
  }
  if (!totals.has("pass")) return null;
  const skips = new Map();
  const perFile = new Map();
  for (const event of events) {
    if (event.type === "diagnostic") continue;
    const file = relativeTest(event.file ?? "?");
    // A file's tests run one after another in its own process: their sum is its time.
    if (event.nesting === 0 && event.ms) perFile.set(file, (perFile.get(file) ?? 0) + event.ms);
    if (event.skip !== undefined && event.skip !== false && !event.suite) {
      const reason = typeof event.skip === "string" && event.skip
        ? event.skip
        : "(no reason given)";
      const key = `${file}\u0000${reason}`;
      skips.set(key, (skips.get(key) ?? 0) + 1);
    }
  }
  const total = (name) => totals.get(name) ?? 0;
  return {
    passed: total("pass"),
    failed: total("fail") + total("cancelled"),
    skipped: total("skipped") + total("todo"),
    skips: [...skips].map(([key, count]) => {
      const [where, reason] = key.split("\u0000");
      return { count, where, reason };
    }),
    durations: [...perFile].map(([file, ms]) => ({ file, ms })),
    errors: linesAfter(dots, /^Failed tests:/),
  };
}

/** `tests/x.test.ts` from an absolute or relative path. */
function relativeTest(path) {
  const at = path.lastIndexOf("tests/");
  return at < 0 ? path : path.slice(at);
}

// A deno verdict: "name ... ok (12ms)", "... FAILED (1s)", "... ignored (0ms)".
const DENO_VERDICT = /^(\s*)(.*) \.\.\. (ok|FAILED|ignored)(?: \(([\d.]+)(µs|ms|s|m)\))?/;
const DENO_OPEN = /^(\s*)(.*) \.\.\.$/;
const UNIT_MS = { "µs": 0.001, ms: 1, s: 1000, m: 60_000 };

/**
 * deno test (pretty reporter): a test's steps (a describe block's cases) print
 * between the block's opening line and its own verdict; only leaves count.
 * With --parallel the lines differ (see denoParallelReport).
 */
export function denoReport(output) {
  const text = plain(output);
  if (!/^(ok|FAILED) \| \d+ passed/m.test(text)) return null;
  if (/^\.\/\S+ => /m.test(text)) return denoParallelReport(text);
  let passed = 0, failed = 0, skipped = 0;
  const perFile = new Map();
  const skipCounts = new Map();
  const open = [];
  let file = "";
  for (const line of text.split("\n")) {
    const running = /^running \d+ tests? from \.\/(.+)$/.exec(line);
    if (running) {
      file = running[1];
      open.length = 0;
      continue;
    }
    const opening = DENO_OPEN.exec(line);
    if (opening) {
      if (open.length) open.at(-1).steps = true;
      open.push({ key: `${opening[1]}${opening[2]}`, steps: false });
      continue;
    }
    const verdict = DENO_VERDICT.exec(line);
    if (!verdict || !file) continue;
    const [, indent, name, result, amount, unit] = verdict;
    if (indent === "" && amount) {
      perFile.set(file, (perFile.get(file) ?? 0) + Number(amount) * UNIT_MS[unit]);
    }
    // "name ..." then its verdict: a block if steps ran in between, else a
    // test that printed output (which Deno puts between the two lines).
    if (open.at(-1)?.key === `${indent}${name}`) {
      if (open.pop().steps) continue;
    } else if (open.length) open.at(-1).steps = true;
    if (result === "ok") passed++;
    else if (result === "FAILED") failed++;
    else {
      skipped++;
      skipCounts.set(file, (skipCounts.get(file) ?? 0) + 1);
    }
  }
  return {
    passed,
    failed,
    skipped,
    skips: skipsByFile(skipCounts, skipMarks(text), "deno"),
    durations: [...perFile].map(([file, ms]) => ({ file, ms })),
    errors: linesAfter(text, /^ ERRORS $/),
  };
}

const failedCount = (text) => Number(/^\s*(\d+) fail$/m.exec(text)?.[1] ?? 0);

// With --parallel, every verdict is one line naming the file and the path:
// "./tests/x.test.ts => block ... case ... ok (3ms)"; a block's own line
// comes after its cases, so leaves are the paths no other path extends.
const DENO_PARALLEL =
  /^\.\/(\S+) => (.*) \.\.\. (ok|FAILED|ignored)(?: \(([\d.]+)(µs|ms|s|m)\))?\s*$/;

function denoParallelReport(text) {
  const verdicts = [];
  for (const line of text.split("\n")) {
    const match = DENO_PARALLEL.exec(line);
    if (match) {
      const [, file, path, result, amount, unit] = match;
      verdicts.push({ file, path, result, ms: amount ? Number(amount) * UNIT_MS[unit] : 0 });
    }
  }
  const parents = new Set(verdicts.map((v) => {
    const cut = v.path.lastIndexOf(" ... ");
    return cut < 0 ? undefined : `${v.file}\u0000${v.path.slice(0, cut)}`;
  }));
  let passed = 0, failed = 0, skipped = 0;
  const perFile = new Map();
  const skipCounts = new Map();
  for (const v of verdicts) {
    if (!v.path.includes(" ... ")) perFile.set(v.file, (perFile.get(v.file) ?? 0) + v.ms);
    if (parents.has(`${v.file}\u0000${v.path}`)) continue;
    if (v.result === "ok") passed++;
    else if (v.result === "FAILED") failed++;
    else {
      skipped++;
      skipCounts.set(v.file, (skipCounts.get(v.file) ?? 0) + 1);
    }
  }
  return {
    passed,
    failed,
    skipped,
    skips: skipsByFile(skipCounts, skipMarks(text), "deno"),
    durations: [...perFile].map(([file, ms]) => ({ file, ms })),
    errors: linesAfter(text, /^ ERRORS $/),
  };
}

/** bun test: counts from its closing lines, skips and durations from JUnit. */
export function bunReport(output, junit) {
  const text = plain(output);
  const count = (word) =>
    Number([...text.matchAll(new RegExp(`^\\s*(\\d+) ${word}$`, "gm"))].at(-1)?.[1] ?? 0);
  if (!/^\s*\d+ pass$/m.test(text)) return null;
  const skipCounts = new Map();
  const durations = [];
  for (const [, attributes] of (junit ?? "").matchAll(/<testsuite ([^>]*)>/g)) {
    const attr = (name) => new RegExp(`\\b${name}="([^"]*)"`).exec(attributes)?.[1];
    // A describe block is a nested suite (it has a line); a file's suite has none.
    if (attr("line") !== undefined) continue;
    const file = relativeTest(attr("file") ?? attr("name") ?? "?");
    skipCounts.set(file, (skipCounts.get(file) ?? 0) + Number(attr("skipped") ?? 0));
    durations.push({ file, ms: Number(attr("time") ?? 0) * 1000 });
  }
  // --only-failures still heads each file; a heading with nothing under it is noise.
  const lines = text.split("\n").filter((line) =>
    line.trim() !== "" && !line.startsWith("floret-skip:") && !/^bun test v/.test(line)
  );
  const heading = (line) => /^\S.*\.test\.ts:$/.test(line ?? "");
  const kept = lines.filter((line, i) =>
    !heading(line) || !/^(\S.*\.test\.ts:|\s*\d+ pass)$/.test(lines[i + 1] ?? "")
  );
  const errors = kept.findIndex((line) => !heading(line)) < 0 || failedCount(text) === 0
    ? []
    : kept.slice(0, ERROR_LINES);
  return {
    passed: count("pass"),
    failed: count("fail"),
    skipped: count("skip") + count("todo"),
    skips: skipsByFile(skipCounts, skipMarks(text), "bun"),
    durations,
    errors,
  };
}
