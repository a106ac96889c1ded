// Precise lifecycle points of issue #15 that the broader lifecycle tests leave
// open: a deferred host never settles a leftover turn behind the host's back
// (so prepareRestore can still stop it as `restored_turn`), and a turn's
// waitingMs is the union of overlapping approval and input waits.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import { defineAgent, defineTool, type KvStore, memoryStore, openHost } from "@floret/engine";
import { scriptedGateway, type ScriptStep } from "@floret/engine/testing";
import { FAST_RETRY } from "./support/engine.ts";
import { isCode, keepOpen, local, sendWait, writeTool } from "./support/interactions.ts";
import { engine } from "./support/engine.ts";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A read tool that never finishes (until aborted). */
const stuck = defineTool({
  name: "stuck",
  description: "never finishes",
  effect: "read",
  input: z.object({}),
  execute: (_input, context) =>
    new Promise<string>((_resolve, reject) =>
      context.signal.addEventListener("abort", () => reject(new Error("aborted")))
    ),
});

function openWith(store: KvStore, steps: ScriptStep[], deferExecution = false) {
  return (async () => {
    const host = await openHost({ store: keepOpen(store), deferExecution });
    const ran: string[] = [];
    const gateway = scriptedGateway(steps);
    const threads = host.threads({
      agent: defineAgent({
        id: "a",
        systemPrompt: "s",
        gateway,
        tools: [writeTool(ran), stuck],
        providerRetry: FAST_RETRY,
      }),
    });
    return { host, threads, gateway, ran };
  })();
}

/** A store with one thread whose turn was left running with an approval pending beside a stuck call. */
async function leftRunning(store: KvStore) {
  const h = await openWith(store, [{
    toolCalls: [
      { name: "write", arguments: { line: "w" } },
      { name: "stuck", arguments: {} },
    ],
  }]);
  const { threadId } = await h.threads.create({ requestKey: "c" });
  await h.threads.send({ threadId, requestKey: "s", input: { text: "go" } });
  for (let i = 0; i < 1000; i++) {
    const view = await h.threads.view(threadId);
    if (view.pending.length === 1) break;
    await sleep(5);
  }
  const view = await h.threads.view(threadId);
  assert.equal(view.status, "running");
  assert.equal(view.pending.length, 1);
  await h.host.shutdown(); // the turn stays unfinished in the store
  return { threadId, interactionId: view.pending[0].id };
}

describe("a deferred host leaves unfinished turns to activate or prepareRestore", () => {
  test("respond and steer on a leftover running turn are execution_deferred and settle nothing", async () => {
    const store = memoryStore();
    const { threadId, interactionId } = await leftRunning(store);
    const h = await openWith(store, [], true);
    const before = await h.threads.view(threadId);
    assert.equal(before.status, "running");
    await assert.rejects(
      h.threads.respond({ threadId, requestKey: "r", interactionId, decision: "approve" }),
      isCode("execution_deferred"),
    );
    await assert.rejects(
      local({ ...h, store, threadId } as never).steer({ threadId, requestKey: "st", text: "hey" }),
      isCode("execution_deferred"),
    );
    const after = await h.threads.view(threadId);
    assert.equal(after.viewVersion, before.viewVersion, "nothing written");
    assert.equal(after.turns[0].outcome, undefined, "the turn was not settled");
    const report = await h.host.prepareRestore();
    assert.deepEqual(report, { stoppedTurns: 1, releasedInteractions: 1, restoredInputs: 0 });
    const restored = await h.threads.view(threadId);
    assert.equal(restored.turns[0].outcome, "interrupted");
    assert.equal(restored.turns[0].failure?.code, "restored_turn");
    assert.deepEqual(restored.pending, []);
    await h.host.activate();
    await assert.rejects(
      h.threads.respond({ threadId, requestKey: "r", interactionId, decision: "approve" }),
      isCode("request_conflict"),
      "released as cancelled",
    );
    assert.deepEqual(h.ran, []);
    await h.host.shutdown();
  });

  test("without a restore, activate settles the leftover turn and a respond then conflicts", async () => {
    const store = memoryStore();
    const { threadId, interactionId } = await leftRunning(store);
    const h = await openWith(store, [], true);
    await h.host.activate();
    const settled = await h.threads.view(threadId);
    assert.equal(settled.turns[0].outcome, "interrupted");
    assert.equal(settled.turns[0].failure?.code, "interrupted");
    await assert.rejects(
      h.threads.respond({ threadId, requestKey: "r", interactionId, decision: "approve" }),
      isCode("request_conflict"),
    );
    assert.deepEqual(h.ran, []);
    await h.host.shutdown();
  });
});

describe("turn timing", () => {
  test("overlapping approval and input waits count once in waitingMs", async () => {
    const ran: string[] = [];
    const e = await engine([
      {
        toolCalls: [
          { name: "ask_user", arguments: { questions: [{ id: "q", prompt: "Size?" }] } },
          { name: "write", arguments: { line: "l" } },
        ],
      },
      { text: "ok" },
    ], { tools: [writeTool(ran)] });
    const waiting = await sendWait(e, "go");
    assert.equal(waiting.pending.length, 2);
    await sleep(60);
    const question = waiting.pending.find((p) => p.kind === "input")!;
    const approval = waiting.pending.find((p) => p.kind === "approval")!;
    await e.threads.respond({
      threadId: e.threadId,
      requestKey: "a",
      interactionId: question.id,
      answers: [{ questionId: "q", value: "XL" }],
    });
    await sleep(60);
    await e.threads.respond({
      threadId: e.threadId,
      requestKey: "b",
      interactionId: approval.id,
      decision: "approve",
    });
    const done = await e.threads.waitForIdle(e.threadId, { timeoutMs: 10_000 });
    const turn = done.turns[0];
    assert.equal(turn.outcome, "completed");
    assert.ok(turn.waitingMs! > 0);
    // Summing the two waits would count the overlap twice and exceed the turn's length.
    assert.ok(turn.waitingMs! <= turn.elapsedMs!, JSON.stringify(turn));
    assert.equal(turn.elapsedMs!, turn.waitingMs! + turn.workMs!);
    await e.host.shutdown();
  });
});

describe("turn timing across restart", () => {
  test("a wait that spans a restart counts as waiting; the figures read the same after another restart", async () => {
    const store = memoryStore();
    let h = await openWith(store, [{ toolCalls: [{ name: "write", arguments: { line: "x" } }] }]);
    const { threadId } = await h.threads.create({ requestKey: "c" });
    await h.threads.send({ threadId, requestKey: "s", input: { text: "go" } });
    const waiting = await h.threads.waitForIdle(threadId, { timeoutMs: 10_000 });
    assert.equal(waiting.status, "waiting");
    assert.equal(waiting.turns[0].elapsedMs, undefined, "an open turn has no elapsed time yet");
    await h.host.shutdown();
    await sleep(80);

    h = await openWith(store, [{ text: "done" }]);
    await h.threads.respond({
      threadId,
      requestKey: "r",
      interactionId: waiting.pending[0].id,
      decision: "approve",
    });
    const done = await h.threads.waitForIdle(threadId, { timeoutMs: 10_000 });
    const turn = done.turns[0];
    assert.equal(turn.outcome, "completed");
    assert.ok(
      turn.waitingMs! >= 80,
      `the wait covers the time the host was down: ${turn.waitingMs}`,
    );
    assert.equal(turn.elapsedMs!, turn.waitingMs! + turn.workMs!);
    assert.ok(turn.workMs! < turn.elapsedMs!);
    const tool = done.items.find((i) => i.kind === "tool")!.tool as {
      startedAt?: string;
      endedAt?: string;
    };
    assert.ok(tool.startedAt && tool.endedAt && tool.startedAt <= tool.endedAt);
    await h.host.shutdown();

    h = await openWith(store, []);
    const again = await h.threads.view(threadId);
    assert.deepEqual(again.turns, done.turns);
    assert.deepEqual(again.items.map((i) => i.tool), done.items.map((i) => i.tool));
    await h.host.shutdown();
  });
});
