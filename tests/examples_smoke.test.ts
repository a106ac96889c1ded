// The examples run as users run them, on the runtime running this test: the
// quickstart end to end (scripted model), the live examples skip cleanly
// without API keys.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));

function runExample(file: string): { status: number | null; output: string } {
  const args = "Deno" in globalThis
    ? ["run", "-A", file]
    : "Bun" in globalThis
    ? [file]
    : ["--import", "tsx", file];
  // The quickstart writes its database under TMPDIR: give it a folder to remove afterwards.
  const scratch = mkdtempSync(join(tmpdir(), "floret-example-"));
  const env: Record<string, string> = { TMPDIR: scratch };
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && !/_API_KEY$/.test(name) && name !== "TMPDIR") env[name] = value;
  }
  try {
    const result = spawnSync(process.execPath, args, {
      cwd: root,
      env,
      encoding: "utf8",
      timeout: 60_000,
    });
    return { status: result.status, output: `${result.stdout}${result.stderr}` };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

test("the quickstart streams a tool conversation, settles it and reopens the file", {
  timeout: 90_000,
}, () => {
  const { status, output } = runExample("examples/quickstart.ts");
  assert.equal(status, 0, output);
  assert.match(output, /scripted model \(set OPENAI_API_KEY to use a real one\)/);
  assert.match(output, /\[tool\] get_weather\(\{"city":"Lisbon"\}\)/);
  assert.match(output, /#4 assistant Lisbon is 16 °C/);
  assert.match(output, /Turn completed\./);
  assert.match(output, /Reopened .*: 5 items, status idle\./);
});

test("the live provider examples say they skip without a key", { timeout: 90_000 }, () => {
  for (
    const [file, name] of [["examples/openai.ts", "OPENAI_API_KEY"], [
      "examples/anthropic.ts",
      "ANTHROPIC_API_KEY",
    ]]
  ) {
    const { status, output } = runExample(file);
    assert.equal(status, 0, output);
    assert.match(output, new RegExp(`${name} is not set`));
  }
});

test("the long conversation runs 200 turns in an 8,000-token window, compacting", {
  timeout: 90_000,
}, () => {
  const { status, output } = runExample("examples/long_conversation.ts");
  assert.equal(status, 0, output);
  assert.match(output, /compaction compacted \(threshold\): \d+ → \d+ tokens/);
  assert.match(output, /200 turns completed; 400 items kept in the view; \d+ compactions/);
  assert.doesNotMatch(output, /compaction failed/);
});
