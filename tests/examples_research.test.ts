// examples/research.ts runs as users run it, on the runtime running this test:
// a lead starts two scripted researchers, waits for both and answers from their reports.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));

test("the research example spawns two children, waits and answers from their reports", {
  timeout: 90_000,
}, () => {
  const file = "examples/research.ts";
  const args = "Deno" in globalThis
    ? ["run", "-A", file]
    : "Bun" in globalThis
    ? [file]
    : ["--import", "tsx", file];
  const result = spawnSync(process.execPath, args, {
    cwd: root,
    encoding: "utf8",
    timeout: 60_000,
  });
  const output = `${result.stdout}${result.stderr}`;
  assert.equal(result.status, 0, output);
  assert.equal(output.match(/\[spawn_agent\] → \{"threadId":"thread_/g)?.length, 2, output);
  assert.match(output, /"status":"completed","report":"The Aster kettle costs 39 €/);
  assert.match(
    output,
    /lead: From my researchers: The Aster kettle .* Reviewers prefer the Birch kettle/,
  );
  assert.match(output, /2 child threads of thread_/);
  assert.match(output, /Prices: idle, turn completed\n {2}Reviews: idle, turn completed/);
});
