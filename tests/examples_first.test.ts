// The README's first program runs as a newcomer runs it, on the runtime running
// this test: offline, it prints the scripted answer and exits 0.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));

test("examples/first.ts prints its answer offline and exits 0", { timeout: 90_000 }, () => {
  const args = "Deno" in globalThis
    ? ["run", "examples/first.ts"]
    : "Bun" in globalThis
    ? ["examples/first.ts"]
    : ["--import", "tsx", "examples/first.ts"];
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && !/_API_KEY$/.test(name)) env[name] = value;
  }
  const result = spawnSync(process.execPath, args, {
    cwd: root,
    env,
    encoding: "utf8",
    timeout: 60_000,
  });
  const output = `${result.stdout}${result.stderr}`;
  assert.equal(result.status, 0, output);
  assert.match(result.stdout, /^answer: 2 \+ 3 = 5$/m);
  assert.equal(result.stderr.includes("the turn failed"), false, output);
});
