// The example server on the runtime running this test, over a real loopback
// socket: threadClient with the global fetch creates a thread, sends, follows
// the SSE stream and reads the settled view; the page and an unknown route answer.
import { test } from "node:test";
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { ThreadUpdate } from "@floret/engine";
import { threadClient } from "@floret/engine/http";

const root = fileURLToPath(new URL("..", import.meta.url));

/** Starts the example on a free port; resolves with its base URL once it listens. */
function startServer(scratch: string): { child: ChildProcess; ready: Promise<string> } {
  const args = "Deno" in globalThis
    ? ["run", "-A", "examples/server.ts"]
    : "Bun" in globalThis
    ? ["./examples/server.ts"]
    : ["--import", "tsx", "examples/server.ts"];
  const env: Record<string, string> = { PORT: "0", FLORET_DB_URL: `file:${scratch}/smoke.db` };
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && !/_API_KEY$/.test(name) && !(name in env)) env[name] = value;
  }
  const child = spawn(process.execPath, args, {
    cwd: root,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const ready = new Promise<string>((resolve, reject) => {
    let output = "";
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${output}`)), 60_000);
    const read = (chunk: Buffer) => {
      output += chunk;
      const match = /Floret chat on (http:\/\/127\.0\.0\.1:\d+)\//.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    };
    child.stdout!.on("data", read);
    child.stderr!.on("data", read);
    child.on("exit", () => {
      clearTimeout(timer);
      reject(new Error(`server exited:\n${output}`));
    });
  });
  return { child, ready };
}

test("the example server serves the API over a real socket", { timeout: 90_000 }, async () => {
  const scratch = mkdtempSync(join(tmpdir(), "floret-server-"));
  const { child, ready } = startServer(scratch);
  try {
    const origin = await ready;
    const threads = threadClient({ baseUrl: `${origin}/api` });
    const { threadId } = await threads.create({ requestKey: "smoke-create", title: "Smoke" });
    const controller = new AbortController();
    const updates = threads.subscribe(threadId, { signal: controller.signal });
    const start = await threads.view(threadId);
    await threads.send({
      threadId,
      requestKey: "smoke-send",
      input: { text: "what is the weather in Oslo" },
    });
    let last = start.viewVersion;
    let ended = false;
    for await (const update of updates as AsyncIterable<ThreadUpdate>) {
      assert.equal(update.type, "batch");
      if (update.type !== "batch" || update.version <= start.viewVersion) continue;
      assert.equal(update.baseVersion, last, "no gaps over the socket");
      last = update.version;
      ended = update.ops.some((op) =>
        op.op === "component" && op.name === "turns" &&
        (op.value as { outcome?: string }[]).at(-1)?.outcome === "completed"
      );
      if (ended) break;
    }
    controller.abort();
    assert.ok(ended);
    const view = await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
    assert.deepEqual(view.items.map((i) => i.kind), ["user", "tool", "assistant"]);
    assert.match(view.items[2].text ?? "", /Oslo/);
    const page = await fetch(`${origin}/`);
    assert.match(await page.text(), /<title>Floret chat<\/title>/);
    const missing = await fetch(`${origin}/api/nope`);
    assert.equal(missing.status, 404);
    await missing.body?.cancel();
  } finally {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill();
      await exited;
    }
    rmSync(scratch, { recursive: true, force: true });
  }
});
