// Real crashes on PostgreSQL: the child (same runtime as this test) drives a
// thread on a fresh database and is SIGKILLed at a chosen point; this process
// reopens the database with `postgresStore` and checks what the public API
// shows. Same checks as the libSQL cases in crash_recovery.test.ts. Skipped,
// saying so, when no PostgreSQL server is configured.
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
import { NO_POSTGRES } from "./support/postgres.ts";
import { skipBecause } from "./support/skip.ts";

const options = { skip: skipBecause(import.meta.url, NO_POSTGRES), timeout: 60_000 };

test(
  "Postgres: a crash while the provider streams leaves the turn interrupted; retry completes it",
  options,
  async () => {
    await withDir("pg-stream", async (paths) => {
      const { ready, acks } = await crashChild("stream", paths);
      assert.equal(acks.length, 1);
      const { host, threads, gateway } = await reopen(
        paths.url,
        [{ text: "The whole answer." }],
        paths.sideFile,
      );
      try {
        const view = await threads.waitForIdle(ready.threadId, { timeoutMs: 5_000 });
        assert.equal(view.turns[0].outcome, "interrupted");
        assert.ok(view.items.every((item) => !item.live), "no live text survives a restart");
        assert.equal(gateway.requests.length, 0, "nothing resumes by itself");
        await threads.retry({ threadId: ready.threadId, requestKey: "retry-1" });
        const done = await threads.waitForIdle(ready.threadId, { timeoutMs: 10_000 });
        assert.equal(done.turns.at(-1)?.outcome, "completed");
        assert.equal(done.items.at(-1)?.text, "The whole answer.");
        await assertReplays(threads, ready.threadId, acks);
      } finally {
        await host.shutdown();
      }
    }, "postgres");
  },
);

test(
  "Postgres: a crash after a write tool was dispatched leaves it unknown, never re-run",
  options,
  async () => {
    await withDir("pg-write", async (paths) => {
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
        assert.deepEqual(toolItems(view).map((tool) => [tool.callId, tool.status]), [[
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
    }, "postgres");
  },
);

test(
  "Postgres: no acknowledged send is lost when the crash lands in a stream of sends",
  options,
  async () => {
    const killAfter = 25;
    await withDir("pg-flood", async (paths) => {
      const { acks } = await crashChild("flood", paths, (seen) => seen.length >= killAfter);
      assert.equal(acks.length, killAfter);
      const threadId = acks[0].threadId;
      const { host, threads, gateway } = await reopen(paths.url, [{
        text: "Should never be asked.",
      }], paths.sideFile);
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
    }, "postgres");
  },
);
