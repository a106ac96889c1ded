// The example server on the runtime running this test, over a real loopback
// socket: threadClient with the global fetch creates a thread, sends, follows
// the SSE stream and reads the settled view; the page and an unknown route answer.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ThreadUpdate } from "@floret/engine";
import { threadClient } from "@floret/engine/http";
import { startServer, stopServer } from "./support/example_server.ts";

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
    await stopServer(child);
    rmSync(scratch, { recursive: true, force: true });
  }
});
