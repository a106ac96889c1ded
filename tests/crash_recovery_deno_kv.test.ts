// Real crashes on a Deno KV file: the child (Deno, like this test) is
// SIGKILLed at a chosen point and this process reopens the file with
// `denoKvStore`. Same checks as the libSQL cases in crash_recovery.test.ts.
// Skipped, saying so, on runtimes without Deno KV.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  assertAcknowledgedPresent,
  assertReplays,
  crashChild,
  linesOf,
  rejectsWith,
  reopen,
  toolItems,
  withDir,
} from "./support/crash_harness.ts";
import { skipOffDeno } from "./support/skip.ts";

const skip = skipOffDeno(import.meta.url);

test("Deno KV: a crash after a write tool was dispatched leaves it unknown, never re-run", {
  skip,
  timeout: 60_000,
}, async () => {
  await withDir("denokv-write", async (paths) => {
    const { ready, acks } = await crashChild("write", paths);
    assert.ok(ready.callId);
    assert.deepEqual(linesOf(paths.sideFile), ["written"]);
    const { host, threads, gateway, runs } = await reopen(
      paths.url,
      [{ text: "Should never be asked." }],
      paths.sideFile,
    );
    try {
      const view = await threads.waitForIdle(ready.threadId, { timeoutMs: 5_000 });
      const tools = toolItems(view);
      assert.deepEqual(tools.map((tool) => [tool.callId, tool.status]), [[
        ready.callId,
        "unknown",
      ]]);
      assert.equal(view.turns[0].failure?.code, "effect_outcome_unknown");
      await rejectsWith(
        threads.retry({ threadId: ready.threadId, requestKey: "retry-1" }),
        "no_retry_target",
      );
      await assertReplays(threads, ready.threadId, acks);
      assert.equal(runs.get("append_line"), undefined);
      assert.equal(gateway.requests.length, 0);
      assert.deepEqual(linesOf(paths.sideFile), ["written"], "the handler ran exactly once");
    } finally {
      await host.shutdown();
    }
  }, "deno-kv");
});

test("Deno KV: no acknowledged send is lost when the crash lands in a stream of sends", {
  skip,
  timeout: 60_000,
}, async () => {
  const killAfter = 25;
  await withDir("denokv-flood", async (paths) => {
    const { acks } = await crashChild("flood", paths, (seen) => seen.length >= killAfter);
    assert.equal(acks.length, killAfter);
    const threadId = acks[0].threadId;
    const { host, threads, gateway } = await reopen(
      paths.url,
      [{ text: "Should never be asked." }],
      paths.sideFile,
    );
    try {
      const view = await threads.waitForIdle(threadId, { timeoutMs: 5_000 });
      assertAcknowledgedPresent(view, acks);
      const keys = view.queue.map((entry) => entry.requestKey);
      assert.ok(keys.length >= killAfter - 1);
      assert.deepEqual(keys, keys.map((_key, i) => `flood-${i + 1}`));
      await assertReplays(threads, threadId, acks);
      assert.equal(gateway.requests.length, 0, "the gateway saw no request");
    } finally {
      await host.shutdown();
    }
  }, "deno-kv");
});
