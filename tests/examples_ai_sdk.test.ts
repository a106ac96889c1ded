// examples/ai_sdk_client.ts runs as users run it, on the runtime running this
// test: the AI SDK's own client sends, regenerates, answers a question and
// asks to resume, against a scripted model.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));

test("the AI SDK client example drives a thread end to end", { timeout: 90_000 }, () => {
  const file = "examples/ai_sdk_client.ts";
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
  assert.match(
    output,
    /answer: "Let me add\. " \[tool-add output-available\] \[step-start\] "2 \+ 3 = 5\."/,
  );
  assert.match(output, /regenerated: "Regenerated: five\."/);
  assert.match(output, /after the answers: \[tool-ask_user output-available\] .*"Noted: red/);
  assert.match(output, /resume with nothing running: ready, 4 messages/);
  assert.match(output, /thread: 3 turns, status idle/);
});
