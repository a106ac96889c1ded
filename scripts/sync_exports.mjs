// Keeps package.json "exports" equal to deno.json "exports" (deno.json is the
// source). `--check` fails instead of writing, for the test gate.
import { readFileSync, writeFileSync } from "node:fs";

const deno = JSON.parse(readFileSync("deno.json", "utf8"));
const pkg = JSON.parse(readFileSync("package.json", "utf8"));
const expected = Object.fromEntries(Object.entries(deno.exports));
const expectedImports = Object.fromEntries(
  Object.entries(deno.exports).map((
    [sub, file],
  ) => [sub === "." ? deno.name : `${deno.name}/${sub.slice(2)}`, file]),
);
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

if (process.argv.includes("--check")) {
  const problems = [];
  if (!same(pkg.exports, expected)) {
    problems.push("package.json exports differ from deno.json exports");
  }
  if (
    !same(
      deno.imports
        ? Object.fromEntries(Object.entries(deno.imports).filter(([k]) => k.startsWith(deno.name)))
        : {},
      expectedImports,
    )
  ) {
    problems.push("deno.json imports do not map every export to its file");
  }
  if (pkg.name !== deno.name || pkg.version !== deno.version) {
    problems.push("name or version differs between package.json and deno.json");
  }
  if (problems.length) {
    console.error(problems.join("\n") + "\nRun: node scripts/sync_exports.mjs");
    process.exit(1);
  }
  console.log("export maps agree");
} else {
  pkg.exports = expected;
  pkg.version = deno.version;
  writeFileSync("package.json", JSON.stringify(pkg, null, 2) + "\n");
  deno.imports = {
    ...Object.fromEntries(
      Object.entries(deno.imports ?? {}).filter(([k]) => !k.startsWith(deno.name)),
    ),
    ...expectedImports,
  };
  writeFileSync("deno.json", JSON.stringify(deno, null, 2) + "\n");
  console.log("package.json exports and deno.json imports written from deno.json exports");
}
