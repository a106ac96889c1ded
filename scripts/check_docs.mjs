// The docs gate (a step of `npm test`): every TypeScript block in README.md and
// docs/ must compile as a user would write it, importing `@floret/engine/...`.
//
// - A block fenced ```ts (or ```typescript) is one module of its own; it is
//   written to a scratch folder and type-checked with the repository's tsc,
//   with `@floret/engine` and every subpath mapped to the local sources
//   (tsconfig `paths`, derived from deno.json "exports", so new entries
//   resolve without touching this file).
// - A block fenced ```ts fragment is shown to readers but not compiled (a
//   partial object, an option inside a larger call). Keep those few.
// - A block right after a line `<!-- file: path/in/repo.ts -->` must also equal
//   that file, so a program printed in the docs is the one the tests run.
// - Examples may use the `Deno` and `Bun` globals: the check declares them
//   loosely, as the docs run on those runtimes too.
//
//   node scripts/check_docs.mjs          check; errors point at file.md:line
//   FLORET_KEEP_DOCS=1 node scripts/...  keep the scratch folder (.docs-check/)
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const scratch = join(root, ".docs-check");

/** README.md and every Markdown file under docs/, in a stable order. */
function markdownFiles() {
  const out = ["README.md"];
  const walk = (dir) => {
    if (!existsSync(join(root, dir))) return;
    for (const name of readdirSync(join(root, dir)).sort()) {
      const path = `${dir}/${name}`;
      if (name.endsWith(".md")) out.push(path);
      else if (!name.includes(".")) walk(path);
    }
  };
  walk("docs");
  return out;
}

/**
 * The fenced blocks of one Markdown file: TypeScript ones with the line their
 * code starts on, whether they are fragments, and the file they must equal.
 */
function extractBlocks(text) {
  const lines = text.split("\n");
  const blocks = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,}|~{3,})\s*([\w-]*)\s*(.*)$/.exec(lines[i]);
    if (!open) continue;
    const [, indent, fence, lang, rest] = open;
    let end = i + 1;
    while (end < lines.length && !lines[end].trimStart().startsWith(fence)) end++;
    if (lang === "ts" || lang === "typescript") {
      const previous = lines.slice(Math.max(0, i - 2), i).join("\n");
      const file = /<!--\s*file:\s*(\S+)\s*-->/.exec(previous)?.[1];
      blocks.push({
        startLine: i + 2, // 1-based line of the first code line
        fragment: /\bfragment\b/.test(rest),
        code: lines.slice(i + 1, end).map((line) => line.slice(indent.length)).join("\n"),
        file,
      });
    }
    i = end;
  }
  return blocks;
}

function main() {
  const deno = JSON.parse(readFileSync(join(root, "deno.json"), "utf8"));
  const paths = {};
  for (const [subpath, source] of Object.entries(deno.exports)) {
    const specifier = subpath === "." ? deno.name : `${deno.name}/${subpath.slice(2)}`;
    paths[specifier] = [`../${source.replace(/^\.\//, "")}`];
  }

  rmSync(scratch, { recursive: true, force: true });
  mkdirSync(scratch, { recursive: true });
  const modules = []; // { name, md, startLine }
  const problems = [];
  let fragments = 0;
  for (const md of markdownFiles()) {
    const blocks = extractBlocks(readFileSync(join(root, md), "utf8"));
    for (const block of blocks) {
      if (block.file) {
        const target = join(root, block.file);
        const actual = existsSync(target) ? readFileSync(target, "utf8") : null;
        if (actual === null) {
          problems.push(`${md}:${block.startLine}: ${block.file} does not exist`);
        } else if (actual.trim() !== block.code.trim()) {
          problems.push(`${md}:${block.startLine}: the block differs from ${block.file}`);
        }
      }
      if (block.fragment) {
        fragments++;
        continue;
      }
      const name = `${md.replace(/[^\w]+/g, "_")}_L${block.startLine}.ts`;
      // `export {}` makes every block a module: top-level await works, names stay local.
      writeFileSync(join(scratch, name), `${block.code}\nexport {};\n`);
      modules.push({ name, md, startLine: block.startLine });
    }
  }
  writeFileSync(
    join(scratch, "globals.d.ts"),
    "// The docs show code for Deno and Bun as well; their globals are declared loosely here.\n" +
      "declare const Deno: any;\ndeclare const Bun: any;\n",
  );
  writeFileSync(
    join(scratch, "tsconfig.json"),
    JSON.stringify(
      {
        compilerOptions: {
          target: "ES2022",
          module: "NodeNext",
          moduleResolution: "NodeNext",
          lib: ["ES2023", "DOM", "DOM.Iterable"],
          types: ["node"],
          strict: true,
          noEmit: true,
          allowImportingTsExtensions: true,
          verbatimModuleSyntax: true,
          isolatedModules: true,
          skipLibCheck: true,
          noUnusedLocals: false,
          paths,
        },
        files: ["globals.d.ts", ...modules.map((m) => m.name)],
      },
      null,
      2,
    ),
  );

  console.log(
    `docs: ${modules.length} TypeScript blocks to compile, ${fragments} fragments skipped`,
  );
  let tscFailed = false;
  if (modules.length) {
    const tsc = join(root, "node_modules", ".bin", "tsc");
    const result = spawnSync(tsc, ["-p", join(scratch, "tsconfig.json"), "--pretty", "false"], {
      cwd: root,
      encoding: "utf8",
      maxBuffer: 64 << 20,
    });
    const output = `${result.stdout ?? ""}${result.stderr ?? ""}${result.error ?? ""}`;
    tscFailed = result.status !== 0;
    // Point each error at the Markdown line it comes from.
    const byName = new Map(modules.map((m) => [m.name, m]));
    for (const line of output.split("\n").filter(Boolean)) {
      const at = /^(?:\.docs-check\/)?([\w.]+\.ts)\((\d+),(\d+)\): (.*)$/.exec(line.trim());
      const module = at && byName.get(at[1]);
      if (module) {
        problems.push(`${module.md}:${module.startLine + Number(at[2]) - 1}:${at[3]}: ${at[4]}`);
      } else problems.push(line);
    }
    if (tscFailed && !output.trim()) problems.push(`tsc exited ${result.status} without output`);
  }
  if (!process.env.FLORET_KEEP_DOCS) rmSync(scratch, { recursive: true, force: true });
  if (problems.length) {
    console.error(problems.join("\n"));
    console.error(`docs: ${problems.length} problem(s)`);
    process.exit(1);
  }
  console.log("docs: every block compiles");
}

main();
