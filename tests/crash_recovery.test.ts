// Restart recovery with real crashes: a child process (same runtime as this
// test) drives a thread on a libSQL file to a chosen point and is SIGKILLed
// there; this process then reopens the file with `openHost` and checks what
// the public API shows (DESIGN.md §5 "Effect boundary", §8 "Restart recovery").
import { test } from "node:test";
import type { ScriptStep } from "@floret/engine/testing";
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

test("a crash while the provider streams leaves the turn interrupted, and retry completes it", {
  timeout: 60_000,
}, async () => {
  await withDir("stream", async (paths) => {
    const { ready, acks } = await crashChild("stream", paths);
    assert.equal(acks.length, 1);
    const { host, threads, gateway } = await reopen(
      paths.url,
      [{ text: "The whole answer." }],
      paths.sideFile,
    );
    try {
      const view = await threads.waitForIdle(ready.threadId, { timeoutMs: 5_000 });
      assert.equal(view.status, "idle");
      assert.equal(view.turns.length, 1);
      const [turn] = view.turns;
      assert.equal(turn.turnId, acks[0].turnId);
      assert.equal(turn.outcome, "interrupted");
      assert.equal(turn.failure?.code, "interrupted");
      assert.deepEqual(view.items.filter((item) => item.kind === "user").map((item) => item.text), [
        "go",
      ]);
      assert.ok(view.items.every((item) => !item.live), "no live text survives a restart");
      assert.equal(gateway.requests.length, 0, "nothing resumes by itself");

      const retried = await threads.retry({ threadId: ready.threadId, requestKey: "retry-1" });
      assert.notEqual(retried.turnId, turn.turnId);
      const done = await threads.waitForIdle(ready.threadId, { timeoutMs: 10_000 });
      const last = done.turns.at(-1);
      assert.equal(last?.turnId, retried.turnId);
      assert.equal(last?.outcome, "completed");
      assert.deepEqual(last?.retryOf, { turnId: turn.turnId, mode: "resume" });
      assert.equal(done.items.at(-1)?.kind, "assistant");
      assert.equal(done.items.at(-1)?.text, "The whole answer.");
      assert.equal(
        done.items.filter((item) => item.kind === "user").length,
        1,
        "retry adds no user item",
      );
      assert.equal(gateway.requests.length, 1);
      const userTexts = gateway.requests[0].messages.flatMap((
        m,
      ) => (m.role === "user" ? [m.text] : []));
      assert.deepEqual(userTexts, ["go"]);
    } finally {
      await host.shutdown();
    }
  });
});

test("a crash after a write tool was dispatched leaves it unknown and never re-runs it", {
  timeout: 60_000,
}, async () => {
  await withDir("write", async (paths) => {
    const { ready } = await crashChild("write", paths);
    assert.ok(ready.callId);
    assert.deepEqual(linesOf(paths.sideFile), ["written"], "the handler ran once before the crash");

    const first = await reopen(paths.url, [{ text: "Should never be asked." }], paths.sideFile);
    try {
      const view = await first.threads.waitForIdle(ready.threadId, { timeoutMs: 5_000 });
      assert.equal(view.status, "idle");
      const tools = toolItems(view);
      assert.equal(tools.length, 1);
      assert.equal(tools[0].callId, ready.callId);
      assert.equal(tools[0].name, "append_line");
      assert.equal(tools[0].status, "unknown");
      assert.equal(view.turns.length, 1);
      assert.equal(view.turns[0].outcome, "failed");
      assert.equal(view.turns[0].failure?.code, "effect_outcome_unknown");
      await rejectsWith(
        first.threads.retry({ threadId: ready.threadId, requestKey: "retry-1" }),
        "no_retry_target",
      );
      assert.equal(first.runs.get("append_line"), undefined);
      assert.equal(first.gateway.requests.length, 0);
    } finally {
      await first.host.shutdown();
    }

    // A second restart settles nothing again and still runs nothing.
    const second = await reopen(paths.url, [{ text: "Should never be asked." }], paths.sideFile);
    try {
      const view = await second.threads.view(ready.threadId);
      assert.equal(view.status, "idle");
      assert.deepEqual(toolItems(view).map((tool) => tool.status), ["unknown"]);
      assert.deepEqual(view.turns.map((turn) => turn.failure?.code), ["effect_outcome_unknown"]);
      await rejectsWith(
        second.threads.retry({ threadId: ready.threadId, requestKey: "retry-2" }),
        "no_retry_target",
      );
      assert.equal(second.runs.get("append_line"), undefined);
      assert.equal(second.gateway.requests.length, 0);
      assert.deepEqual(linesOf(paths.sideFile), ["written"], "the handler ran exactly once in all");
    } finally {
      await second.host.shutdown();
    }
  });
});

test("a crash while a read tool runs cancels the call, and retry runs it again", {
  timeout: 60_000,
}, async () => {
  await withDir("read", async (paths) => {
    const { ready, acks } = await crashChild("read", paths);
    assert.ok(ready.callId);
    assert.deepEqual(linesOf(paths.sideFile), ["looked up"]);

    // The model is asked only once the interrupted call has run again: it answers at once.
    const steps: ScriptStep[] = [{ text: "Found it." }];
    const { host, threads, gateway, runs } = await reopen(paths.url, steps, paths.sideFile);
    try {
      const view = await threads.waitForIdle(ready.threadId, { timeoutMs: 5_000 });
      const tools = toolItems(view);
      assert.equal(tools.length, 1);
      assert.equal(tools[0].callId, ready.callId);
      assert.equal(tools[0].status, "cancelled");
      assert.equal(view.turns.length, 1);
      assert.equal(view.turns[0].turnId, acks[0].turnId);
      assert.equal(view.turns[0].outcome, "interrupted");
      assert.equal(view.turns[0].failure?.code, "interrupted");
      assert.equal(gateway.requests.length, 0);

      const retried = await threads.retry({ threadId: ready.threadId, requestKey: "retry-1" });
      const done = await threads.waitForIdle(ready.threadId, { timeoutMs: 10_000 });
      const last = done.turns.at(-1);
      assert.equal(last?.turnId, retried.turnId);
      assert.equal(last?.outcome, "completed");
      assert.deepEqual(last?.retryOf, { turnId: acks[0].turnId, mode: "resume" });
      assert.equal(runs.get("lookup"), 1, "the safe call ran again, once");
      assert.deepEqual(linesOf(paths.sideFile), ["looked up", "looked up"]);
      // The same call, now with its result: no second tool item.
      assert.deepEqual(toolItems(done).map((tool) => [tool.callId, tool.status]), [
        [ready.callId, "completed"],
      ]);
      assert.equal(done.items.at(-1)?.text, "Found it.");
      assert.equal(gateway.requests.length, 1);
      // Resumed from the save point: the model sees its earlier call and its real result.
      const resumed = gateway.requests[0].messages;
      assert.ok(
        resumed.some((m) =>
          m.role === "assistant" && m.toolCalls?.some((c) => c.callId === ready.callId)
        ),
      );
      const results = resumed.filter((m) => m.role === "tool" && m.callId === ready.callId);
      assert.equal(results.length, 1);
      assert.equal(results[0].role === "tool" && results[0].isError, undefined);
      assert.match(results[0].role === "tool" ? results[0].output : "", /ok: looked up/);
    } finally {
      await host.shutdown();
    }
    // A fresh host reads the same from the journal.
    const again = await reopen(paths.url, [], paths.sideFile);
    try {
      const view = await again.threads.view(ready.threadId);
      assert.deepEqual(toolItems(view).map((tool) => tool.status), ["completed"]);
    } finally {
      await again.host.shutdown();
    }
  });
});

test(
  "a crash after a write tool's result was committed keeps the result, and retry does not re-run it",
  {
    timeout: 60_000,
  },
  async () => {
    await withDir("written", async (paths) => {
      const { ready, acks } = await crashChild("written", paths);
      assert.deepEqual(linesOf(paths.sideFile), ["written"]);
      const { host, threads, gateway, runs } = await reopen(
        paths.url,
        [{ text: "Done." }],
        paths.sideFile,
      );
      try {
        const view = await threads.waitForIdle(ready.threadId, { timeoutMs: 5_000 });
        const tools = toolItems(view);
        assert.deepEqual(tools.map((tool) => [tool.name, tool.status, tool.output]), [
          ["append_once", "completed", "ok: written"],
        ]);
        assert.deepEqual(view.turns.map((turn) => [turn.outcome, turn.failure?.code]), [[
          "interrupted",
          "interrupted",
        ]]);

        const retried = await threads.retry({ threadId: ready.threadId, requestKey: "retry-1" });
        const done = await threads.waitForIdle(ready.threadId, { timeoutMs: 10_000 });
        assert.deepEqual(done.turns.at(-1)?.retryOf, { turnId: acks[0].turnId, mode: "resume" });
        assert.equal(done.turns.at(-1)?.turnId, retried.turnId);
        assert.equal(done.turns.at(-1)?.outcome, "completed");
        assert.equal(done.items.at(-1)?.text, "Done.");
        assert.equal(runs.get("append_once"), undefined, "the completed call is kept, not re-run");
        assert.deepEqual(linesOf(paths.sideFile), ["written"]);
        assert.equal(gateway.requests.length, 1);
        const toolMessages = gateway.requests[0].messages.filter((m) => m.role === "tool");
        assert.deepEqual(
          toolMessages.map((m) => m.role === "tool" && [m.output, m.isError ?? false]),
          [
            ["ok: written", false],
          ],
        );
      } finally {
        await host.shutdown();
      }
    });
  },
);

test("crashes at arbitrary points of a tool loop never lose or repeat a side effect", {
  timeout: 120_000,
}, async () => {
  // Kill points in ticks (tool runs seen); the kill lands wherever the child is by then.
  for (const killAt of [1, 2, 3, 5, 8, 13]) {
    await withDir(`loop-${killAt}`, async (paths) => {
      const { acks } = await crashChild("loop", paths, (_acks, _ready, ticks) => ticks >= killAt);
      const threadId = acks[0].threadId;
      const ran = linesOf(paths.sideFile);
      assert.ok(ran.length >= killAt);
      assert.equal(new Set(ran).size, ran.length, "no handler ran twice");

      const { host, threads, gateway, runs } = await reopen(
        paths.url,
        [{ text: "Done." }],
        paths.sideFile,
      );
      try {
        const view = await threads.waitForIdle(threadId, { timeoutMs: 5_000 });
        assert.equal(view.status, "idle");
        assert.equal(view.turns.length, 1);
        const tools = toolItems(view);
        for (const tool of tools) {
          // A write call is dispatched before its handler runs: it ran (completed) or may have (unknown).
          if (tool.status === "completed") {
            assert.ok(ran.includes(tool.callId), `${tool.callId} completed but never ran`);
          } else {assert.equal(
              tool.status,
              "unknown",
              `${killAt}: ${tool.callId} is ${tool.status}`,
            );}
        }
        for (const callId of ran) {
          assert.ok(
            tools.some((tool) => tool.callId === callId),
            `${callId} ran but has no tool item`,
          );
        }
        const unknown = tools.filter((tool) => tool.status === "unknown");
        assert.ok(unknown.length <= 1);
        const [turn] = view.turns;
        if (unknown.length === 1) {
          assert.deepEqual([turn.outcome, turn.failure?.code], [
            "failed",
            "effect_outcome_unknown",
          ]);
          await rejectsWith(threads.retry({ threadId, requestKey: "retry" }), "no_retry_target");
        } else {
          assert.deepEqual([turn.outcome, turn.failure?.code], ["interrupted", "interrupted"]);
          await threads.retry({ threadId, requestKey: "retry" });
          const done = await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
          assert.equal(done.turns.at(-1)?.outcome, "completed");
          assert.equal(gateway.requests.length, 1);
        }
        assert.equal(runs.get("record_call"), undefined, "nothing ran again after the restart");
        assert.deepEqual(linesOf(paths.sideFile), ran);
      } finally {
        await host.shutdown();
      }
    });
  }
});

test("no acknowledged send is lost: completed, handed-over and queued input survive a crash", {
  timeout: 60_000,
}, async () => {
  await withDir("queue", async (paths) => {
    const { ready, acks } = await crashChild("queue", paths);
    assert.deepEqual(acks.map((ack) => [ack.requestKey, ack.queued]), [
      ["send-1", false],
      ["send-2", true],
      ["send-3", true],
      ["send-4", true],
    ]);
    const { host, threads, gateway } = await reopen(
      paths.url,
      [{ text: "Should never be asked." }],
      paths.sideFile,
    );
    try {
      const view = await threads.waitForIdle(ready.threadId, { timeoutMs: 5_000 });
      assertAcknowledgedPresent(view, acks);
      assert.deepEqual(view.turns.map((turn) => turn.outcome), ["completed", "interrupted"]);
      assert.equal(view.turns[0].turnId, acks[0].turnId);
      assert.deepEqual(view.items.map((item) => [item.kind, item.text]), [
        ["user", "first"],
        ["assistant", "First answer."],
        ["user", "second"],
      ]);
      assert.deepEqual(view.queue.map((entry) => entry.requestKey), ["send-3", "send-4"]);

      await assertReplays(threads, ready.threadId, acks);
      const after = await threads.view(ready.threadId);
      assert.equal(after.turns.length, 2, "replays admit no turn");
      assert.deepEqual(after.queue, view.queue, "replays queue nothing");
      assert.equal(gateway.requests.length, 0, "the gateway saw no request");
    } finally {
      await host.shutdown();
    }
  });
});

test("no acknowledged send is lost when the crash lands in a stream of sends", {
  timeout: 60_000,
}, async () => {
  const killAfter = 25;
  await withDir("flood", async (paths) => {
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
      assert.deepEqual(view.turns.map((turn) => turn.outcome), ["interrupted"]);
      // Sends ran one after another: what survived is a gap-free prefix (maybe longer than we saw).
      const keys = view.queue.map((entry) => entry.requestKey);
      assert.ok(keys.length >= killAfter - 1);
      assert.deepEqual(keys, keys.map((_key, i) => `flood-${i + 1}`));
      await assertReplays(threads, threadId, acks);
      assert.equal(gateway.requests.length, 0, "the gateway saw no request");
    } finally {
      await host.shutdown();
    }
  });
});

test(
  "a crash during the summary request installs nothing but a failed record, and retry compacts and completes",
  {
    timeout: 60_000,
  },
  async () => {
    await withDir("summary", async (paths) => {
      const { ready, acks } = await crashChild("summary", paths);
      assert.equal(acks.length, 2);
      const { host, threads, gateway } = await reopen(
        paths.url,
        [{ text: "Summary after the crash." }, { text: "Answer after the crash." }],
        paths.sideFile,
      );
      try {
        const before = await threads.context(ready.threadId);
        assert.deepEqual(
          before.compactions.map((c) => [c.status, c.trigger]),
          [["failed", "threshold"]],
          "the stopped operation leaves one failed record and no checkpoint",
        );
        assert.match(before.compactions[0].reason ?? "", /interrupted/);
        const view = await threads.waitForIdle(ready.threadId, { timeoutMs: 5_000 });
        assert.equal(view.turns.at(-1)?.outcome, "interrupted");
        await threads.retry({ threadId: ready.threadId, requestKey: "retry-summary" });
        const done = await threads.waitForIdle(ready.threadId, { timeoutMs: 10_000 });
        assert.equal(done.turns.at(-1)?.outcome, "completed");
        const after = await threads.context(ready.threadId);
        assert.deepEqual(after.compactions.map((c) => c.status), ["failed", "compacted"]);
        assert.equal(gateway.requests.length, 2);
        const summary = gateway.requests[0];
        assert.equal(summary.messages[0].role, "system");
        assert.notEqual((summary.messages[0] as { text: string }).text, "Crash test.");
        assert.deepEqual(summary.tools, [], "the first request after the retry is the summary");
        assert.match(JSON.stringify(gateway.requests[1].messages[1]), /Summary after the crash\./);
      } finally {
        await host.shutdown();
      }
    });
  },
);

test(
  "a crash during a manual compaction's summary request leaves a failed record; its key replays it",
  {
    timeout: 60_000,
  },
  async () => {
    await withDir("compact", async (paths) => {
      const { ready, acks } = await crashChild("compact", paths);
      assert.equal(acks.length, 2);
      const { host, threads, gateway, events } = await reopen(paths.url, [], paths.sideFile);
      try {
        const view = await threads.waitForIdle(ready.threadId, { timeoutMs: 5_000 });
        assert.equal(view.turns.length, 3);
        assert.equal(view.turns.at(-1)?.outcome, "interrupted", "the compaction turn was settled");
        const { compactions } = await threads.context(ready.threadId);
        assert.equal(compactions.length, 1, "one record for the one operation");
        const [record] = compactions;
        assert.equal(record.status, "failed");
        assert.equal(record.trigger, "manual");
        assert.equal(record.tokensAfter, undefined, "nothing was installed");
        assert.match(record.reason ?? "", /interrupted/);
        const observed = events.filter((event) => event.type === "compaction");
        assert.deepEqual(observed.map((event) => [event.operationId, event.status]), [
          [record.operationId, "failed"],
        ], "recovery reports the record it wrote");

        const replay = await threads.compact({ threadId: ready.threadId, requestKey: "compact-1" });
        assert.equal(replay.outcome, "noop");
        assert.deepEqual(replay.compaction, record);
        assert.equal(replay.view.turns.length, 3, "a replay admits no turn");
        assert.deepEqual((await threads.context(ready.threadId)).compactions, compactions);
        assert.equal(gateway.requests.length, 0, "the gateway saw no request");
      } finally {
        await host.shutdown();
      }
    });
  },
);
