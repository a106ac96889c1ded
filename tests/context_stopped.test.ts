/**
 * Compactions stopped during their summary request (DESIGN §10, "Records":
 * each operation leaves one record): a cancel leaves a `failed` record for a
 * manual or an automatic compaction, installs nothing, and a replay of the
 * manual key answers the same without adding a record. Stopped operations
 * are not summary failures: the circuit breaker does not count them. A fork
 * cut while a compaction runs records it too. The crash of a process during
 * the summary request is in crash_recovery.test.ts.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { memoryStore, type ObservationEvent } from "@floret/engine";
import { textOf } from "./support/context_gateway.ts";
import { fullThread, setup } from "./support/context_host.ts";

type Env = Awaited<ReturnType<typeof setup>>;

/** Waits until the gateway has seen `n` summary requests. */
async function summaryRequested(e: Env, n: number): Promise<void> {
  while (e.gateway.summaries.length < n) await new Promise((r) => setTimeout(r, 2));
}

describe("a manual compaction cancelled during its summary request", () => {
  test("leaves one failed record, answers noop, and a replay agrees without adding one", async () => {
    const e = await fullThread();
    const estimate = (await e.threads.context(e.threadId)).estimateTokens;
    e.gateway.summaryAnswers.push({ hang: true });
    const pending = e.threads.compact({ threadId: e.threadId, requestKey: "m1" });
    await summaryRequested(e, 1);
    await e.threads.cancel({ threadId: e.threadId, requestKey: "stop" });
    const result = await pending;
    assert.equal(result.outcome, "noop", "nothing was installed");
    assert.equal(result.compaction?.status, "failed");
    assert.equal(result.compaction?.trigger, "manual");
    assert.equal(result.compaction?.tokensBefore, estimate);
    assert.equal(result.compaction?.tokensAfter, undefined);
    assert.match(result.compaction?.reason ?? "", /cancelled/);
    assert.equal(result.view.turns.at(-1)?.outcome, "cancelled");

    const figures = await e.threads.context(e.threadId);
    assert.deepEqual(figures.compactions, [result.compaction]);
    assert.equal(figures.estimateTokens, estimate, "the context is unchanged");

    const replay = await e.threads.compact({ threadId: e.threadId, requestKey: "m1" });
    assert.equal(replay.outcome, "noop");
    assert.deepEqual(replay.compaction, result.compaction);
    assert.equal(e.gateway.summaries.length, 1, "a replay runs nothing");
    assert.equal((await e.threads.context(e.threadId)).compactions.length, 1, "nor records");

    const again = await e.threads.compact({ threadId: e.threadId, requestKey: "m2" });
    assert.equal(again.outcome, "compacted");
    assert.deepEqual(
      (await e.threads.context(e.threadId)).compactions.map((c) => c.status),
      ["failed", "compacted"],
    );
    await e.host.shutdown();
  });

  test("a cancel as soon as the compaction turn runs still leaves its one record", async () => {
    const e = await fullThread();
    e.gateway.summaryAnswers.push({ hang: true });
    const pending = e.threads.compact({ threadId: e.threadId, requestKey: "m1" });
    while ((await e.threads.view(e.threadId)).status !== "running") {
      await new Promise((r) => setTimeout(r, 1));
    }
    await e.threads.cancel({ threadId: e.threadId, requestKey: "stop" });
    const result = await pending;
    assert.equal(result.outcome, "noop");
    assert.equal(result.compaction?.status, "failed");
    assert.match(result.compaction?.reason ?? "", /cancelled/);
    assert.deepEqual((await e.threads.context(e.threadId)).compactions, [result.compaction]);
    await e.host.shutdown();
  });

  test("its record survives a restart, and the key's replay there answers the same", async () => {
    const store = memoryStore();
    const keepOpen = { ...store, close: () => Promise.resolve() };
    const e = await fullThread({ store: keepOpen });
    e.gateway.summaryAnswers.push({ hang: true });
    const pending = e.threads.compact({ threadId: e.threadId, requestKey: "m1" });
    await summaryRequested(e, 1);
    await e.threads.cancel({ threadId: e.threadId, requestKey: "stop" });
    const result = await pending;
    await e.host.shutdown();

    const r = await setup({ store: keepOpen });
    assert.deepEqual((await r.threads.context(e.threadId)).compactions, [result.compaction]);
    const replay = await r.threads.compact({ threadId: e.threadId, requestKey: "m1" });
    assert.equal(replay.outcome, "noop");
    assert.deepEqual(replay.compaction, result.compaction);
    assert.equal(r.gateway.summaries.length, 0);
    await r.host.shutdown();
  });
});

describe("an automatic compaction cancelled during its summary request", () => {
  test("leaves one failed record in its turn and installs nothing", async () => {
    const events: ObservationEvent[] = [];
    const e = await fullThread({ events });
    e.gateway.summaryAnswers.push({ hang: true });
    await e.threads.send({ threadId: e.threadId, requestKey: "q3", input: { text: "q3" } });
    await summaryRequested(e, 1);
    const { view } = await e.threads.cancel({ threadId: e.threadId, requestKey: "stop" });
    assert.equal(view.turns.at(-1)?.outcome, "cancelled");
    assert.equal(view.turns.length, 3, "an automatic compaction adds no turn");
    const figures = await e.threads.context(e.threadId);
    assert.equal(figures.compactions.length, 1);
    const [record] = figures.compactions;
    assert.equal(record.status, "failed");
    assert.equal(record.trigger, "threshold");
    assert.equal(record.tokensAfter, undefined);
    assert.match(record.reason ?? "", /cancelled/);
    assert.equal(e.gateway.requests.length, 2, "no model request was made in the stopped turn");
    const observed = events.filter((event) => event.type === "compaction");
    assert.equal(observed.length, 1, "the cancel reports the record as the run would have");
    assert.equal(observed[0].operationId, record.operationId);
    assert.equal(observed[0].status, "failed");
    assert.equal(observed[0].turnId, view.turns.at(-1)?.turnId);
    await e.host.shutdown();
  });

  test("stopped compactions are not summary failures: the circuit breaker stays closed", async () => {
    const e = await fullThread();
    for (const [n, key] of [[1, "q3"], [2, "q4"]] as const) {
      e.gateway.summaryAnswers.push({ hang: true });
      await e.threads.send({ threadId: e.threadId, requestKey: key, input: { text: key } });
      await summaryRequested(e, n);
      await e.threads.cancel({ threadId: e.threadId, requestKey: `stop-${key}` });
    }
    const view = await e.say("q5");
    assert.equal(view.turns.at(-1)?.outcome, "completed");
    assert.equal(e.gateway.summaries.length, 3, "a third summary request is made");
    assert.match(textOf(e.gateway.requests.at(-1)!), /SUMMARY-3/);
    assert.deepEqual(
      (await e.threads.context(e.threadId)).compactions.map((c) => [c.status, c.trigger]),
      [["failed", "threshold"], ["failed", "threshold"], ["compacted", "threshold"]],
    );
    await e.host.shutdown();
  });
});

describe("a fork cut while a compaction runs", () => {
  test("records the operation as failed in the fork, and the source its own outcome", async () => {
    const e = await fullThread();
    e.gateway.summaryAnswers.push({ hang: true });
    await e.threads.send({ threadId: e.threadId, requestKey: "q3", input: { text: "q3" } });
    await summaryRequested(e, 1);
    const fork = await e.threads.fork({ threadId: e.threadId, requestKey: "fork" });
    const forked = await e.threads.context(fork.threadId);
    assert.deepEqual(forked.compactions.map((c) => [c.status, c.trigger]), [
      ["failed", "threshold"],
    ]);
    assert.match(forked.compactions[0].reason ?? "", /fork/);
    assert.equal((await e.threads.view(fork.threadId)).turns.at(-1)?.outcome, "interrupted");
    assert.deepEqual((await e.threads.context(e.threadId)).compactions, [], "still running");
    await e.threads.cancel({ threadId: e.threadId, requestKey: "stop" });
    const source = await e.threads.context(e.threadId);
    assert.equal(source.compactions.length, 1);
    assert.match(source.compactions[0].reason ?? "", /cancelled/);
    await e.host.shutdown();
  });
});
