import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import { defineAgent, defineTool, memoryStore, openHost } from "@floret/engine";
import { scriptedGateway } from "@floret/engine/testing";
import { addTool, engine, FAST_RETRY, lastTurn, until } from "./support/engine.ts";
import {
  isCode,
  keepOpen,
  sendWait,
  toolMessages,
  tools,
  userTexts,
  writeTool,
} from "./support/interactions.ts";

describe("approvals", () => {
  test("ask puts a durable approval on the tool item; the thread waits; approve runs it once", async () => {
    const ran: string[] = [];
    const e = await engine([
      { toolCalls: [{ name: "write", arguments: { line: "a" }, callId: "c1" }] },
      { text: "done" },
    ], { tools: [writeTool(ran)] });
    const waiting = await sendWait(e, "go");
    assert.equal(waiting.status, "waiting");
    assert.equal(ran.length, 0, "nothing runs unapproved");
    assert.equal(waiting.pending.length, 1);
    const pending = waiting.pending[0];
    assert.equal(pending.kind, "approval");
    assert.equal(pending.callId, "c1");
    assert.equal(pending.toolName, "write");
    const item = waiting.items.find((i) => i.kind === "tool")!;
    assert.equal(item.tool!.status, "waiting_approval");
    assert.equal(item.interaction?.id, pending.id);
    assert.equal(e.gateway.requests.length, 1);

    const { view } = await e.threads.respond({
      threadId: e.threadId,
      requestKey: "r1",
      interactionId: pending.id,
      decision: "approve",
    });
    assert.equal(view.status, "running", "respond returns after the run is admitted");
    const done = await e.threads.waitForIdle(e.threadId, { timeoutMs: 10_000 });
    assert.equal(done.status, "idle");
    assert.deepEqual(ran, ["a"]);
    assert.deepEqual(lastTurn(done), { outcome: "completed", code: undefined });
    assert.equal(done.turns.length, 1, "the same turn goes on");
    assert.deepEqual(done.pending, []);
    assert.equal(tools(done)[0].status, "completed");
    assert.equal(toolMessages(e.gateway.requests[1].messages)[0].output, "wrote a");

    // Same decision replays (any key); a different one conflicts; unknown ids are not found.
    await e.threads.respond({
      threadId: e.threadId,
      requestKey: "r1",
      interactionId: pending.id,
      decision: "approve",
    });
    await e.threads.respond({
      threadId: e.threadId,
      requestKey: "r1-again",
      interactionId: pending.id,
      decision: "approve",
    });
    await assert.rejects(
      e.threads.respond({
        threadId: e.threadId,
        requestKey: "r2",
        interactionId: pending.id,
        decision: "deny",
      }),
      isCode("request_conflict"),
    );
    await assert.rejects(
      e.threads.respond({
        threadId: e.threadId,
        requestKey: "r3",
        interactionId: "interaction_nope",
        decision: "deny",
      }),
      isCode("interaction_not_found"),
    );
    assert.deepEqual(ran, ["a"], "replays run nothing");
    await e.host.shutdown();
  });

  test("several approvals in one batch, answered out of order: results reach the model in call order, once", async () => {
    const ran: string[] = [];
    const e = await engine([
      {
        toolCalls: [
          { name: "write", arguments: { line: "1" }, callId: "c1" },
          { name: "add", arguments: { a: 1, b: 2 }, callId: "c2" },
          { name: "write", arguments: { line: "3" }, callId: "c3" },
        ],
      },
      { text: "done" },
    ], { tools: [writeTool(ran), addTool()] });
    const waiting = await sendWait(e, "go");
    assert.equal(waiting.pending.length, 2);
    assert.deepEqual(tools(waiting).map((t) => t.status), [
      "waiting_approval",
      "completed",
      "waiting_approval",
    ]);
    const [first, second] = waiting.pending;
    await e.threads.respond({
      threadId: e.threadId,
      requestKey: "b",
      interactionId: second.id,
      decision: "approve",
    });
    const mid = await e.threads.waitForIdle(e.threadId, { timeoutMs: 10_000 });
    assert.equal(mid.status, "waiting");
    assert.deepEqual(ran, ["3"], "an approved call runs as soon as it is approved");
    assert.equal(e.gateway.requests.length, 1, "the model waits for the whole batch");
    await e.threads.respond({
      threadId: e.threadId,
      requestKey: "a",
      interactionId: first.id,
      decision: "deny",
    });
    const done = await e.threads.waitForIdle(e.threadId, { timeoutMs: 10_000 });
    assert.equal(done.status, "idle");
    assert.deepEqual(ran, ["3"]);
    assert.deepEqual(tools(done).map((t) => t.status), ["denied", "completed", "completed"]);
    const results = toolMessages(e.gateway.requests[1].messages);
    assert.deepEqual(results.map((r) => r.output.slice(0, 9)), ["The user ", "3", "wrote 3"]);
    assert.match(results[0].output, /denied/);
    await e.host.shutdown();
  });

  test("approvals answered at the same moment run each call once", async () => {
    const ran: string[] = [];
    const e = await engine([
      {
        toolCalls: [
          { name: "write", arguments: { line: "1" } },
          { name: "write", arguments: { line: "2" } },
          { name: "write", arguments: { line: "3" } },
        ],
      },
      { text: "done" },
    ], { tools: [writeTool(ran)] });
    const waiting = await sendWait(e, "go");
    await Promise.all(
      waiting.pending.flatMap((pending, i) =>
        [0, 1].map((copy) =>
          e.threads.respond({
            threadId: e.threadId,
            requestKey: `r${i}:${copy}`,
            interactionId: pending.id,
            decision: "approve",
          })
        )
      ),
    );
    const done = await e.threads.waitForIdle(e.threadId, { timeoutMs: 10_000 });
    assert.equal(done.status, "idle");
    assert.deepEqual([...ran].sort(), ["1", "2", "3"]);
    assert.equal(e.gateway.requests.length, 2);
    assert.deepEqual(toolMessages(e.gateway.requests[1].messages).map((m) => m.output), [
      "wrote 1",
      "wrote 2",
      "wrote 3",
    ]);
    await e.host.shutdown();
  });

  test("a permission function returning ask waits too; bad responds write nothing", async () => {
    const ran: string[] = [];
    const tool = defineTool({
      name: "write",
      description: "w",
      effect: "write",
      input: z.object({ line: z.string() }),
      permission: (input) => input.line === "ok" ? "allow" : "ask",
      execute: ({ line }) => (ran.push(line), "ok"),
    });
    const e = await engine([
      { toolCalls: [{ name: "write", arguments: { line: "x" } }] },
      { text: "done" },
    ], { tools: [tool] });
    const waiting = await sendWait(e, "go");
    const id = waiting.pending[0].id;
    await assert.rejects(
      e.threads.respond({
        threadId: e.threadId,
        requestKey: "k",
        interactionId: id,
        answers: [{ questionId: "q", value: "v" }],
      }),
      isCode("invalid_input"),
    );
    await assert.rejects(
      e.threads.respond({ threadId: e.threadId, requestKey: "k", interactionId: id }),
      isCode("invalid_input"),
    );
    const after = await e.threads.view(e.threadId);
    assert.equal(after.status, "waiting");
    assert.equal(after.pending.length, 1);
    // The rejected command did not consume its key.
    await e.threads.respond({
      threadId: e.threadId,
      requestKey: "k",
      interactionId: id,
      decision: "approve",
    });
    await e.threads.waitForIdle(e.threadId, { timeoutMs: 10_000 });
    assert.deepEqual(ran, ["x"]);
    await e.host.shutdown();
  });

  test("approvals survive a host restart; cancel while waiting resolves them as cancelled and runs nothing", async () => {
    const store = memoryStore();
    const ran: string[] = [];
    const gateway = scriptedGateway([
      { toolCalls: [{ name: "write", arguments: { line: "a" } }] },
      { text: "done" },
      { toolCalls: [{ name: "write", arguments: { line: "b" } }] },
    ]);
    const open = async () => {
      const host = await openHost({ store: keepOpen(store) });
      const threads = host.threads({
        agent: defineAgent({
          id: "a",
          systemPrompt: "s",
          gateway,
          tools: [writeTool(ran)],
          providerRetry: FAST_RETRY,
        }),
      });
      return { host, threads };
    };
    let h = await open();
    const { threadId } = await h.threads.create({ requestKey: "c" });
    await h.threads.send({ threadId, requestKey: "s", input: { text: "go" } });
    const before = await h.threads.waitForIdle(threadId, { timeoutMs: 10_000 });
    await h.host.shutdown();

    h = await open();
    const reopened = await h.threads.view(threadId);
    assert.equal(reopened.status, "waiting");
    assert.deepEqual(reopened.pending.map((p) => p.id), before.pending.map((p) => p.id));
    await h.threads.respond({
      threadId,
      requestKey: "r",
      interactionId: reopened.pending[0].id,
      decision: "approve",
    });
    const done = await h.threads.waitForIdle(threadId, { timeoutMs: 10_000 });
    assert.equal(done.status, "idle");
    assert.deepEqual(ran, ["a"]);

    await h.threads.send({ threadId, requestKey: "s2", input: { text: "again" } });
    const waiting = await h.threads.waitForIdle(threadId, { timeoutMs: 10_000 });
    assert.equal(waiting.status, "waiting");
    const pendingId = waiting.pending[0].id;
    const { view } = await h.threads.cancel({ threadId, requestKey: "x" });
    assert.equal(view.status, "idle");
    assert.deepEqual(view.pending, []);
    assert.equal(view.turns.at(-1)?.outcome, "cancelled");
    assert.equal(tools(view).at(-1)?.status, "cancelled");
    await assert.rejects(
      h.threads.respond({
        threadId,
        requestKey: "late",
        interactionId: pendingId,
        decision: "approve",
      }),
      isCode("request_conflict"),
    );
    assert.deepEqual(ran, ["a"]);
    await h.host.shutdown();
  });
});

describe("cancel, fork and the queue around interactions", () => {
  test("graceful cancel keeps the streamed text as a settled assistant item; includeDescendants is accepted", async () => {
    const e = await engine([{ hang: true, text: "half an answer" }]);
    await e.threads.send({ threadId: e.threadId, requestKey: "s", input: { text: "go" } });
    await until(e, (view) => view.items.some((item) => item.kind === "assistant"));
    const { view } = await e.threads.cancel({
      threadId: e.threadId,
      requestKey: "c",
      mode: "graceful",
      includeDescendants: true,
    });
    assert.notEqual(view.status, "running");
    const idle = await e.threads.waitForIdle(e.threadId, { timeoutMs: 10_000 });
    assert.deepEqual(lastTurn(idle), { outcome: "cancelled", code: undefined });
    const assistant = idle.items.find((item) => item.kind === "assistant");
    assert.equal(assistant?.text, "half an answer");
    assert.ok(!assistant?.live, "settled, not live");
    await assert.rejects(
      e.threads.cancel({
        threadId: e.threadId,
        requestKey: "c2",
        includeDescendants: "yes" as unknown as boolean,
      }),
      isCode("invalid_input"),
    );
    await e.host.shutdown();
  });

  test("send while waiting queues; retry is busy; a fork inherits no pending interaction but keeps answers", async () => {
    const ran: string[] = [];
    const e = await engine([
      {
        toolCalls: [{
          name: "ask_user",
          arguments: { questions: [{ id: "city", prompt: "Which city?" }] },
        }],
      },
      { toolCalls: [{ name: "write", arguments: { line: "x" } }] },
      { text: "done" },
      { text: "queued reply" },
      { text: "fork reply" },
    ], { tools: [writeTool(ran)] });
    const waiting = await sendWait(e, "plan a trip");
    const queued = await e.threads.send({
      threadId: e.threadId,
      requestKey: "q",
      input: { text: "and then?" },
    });
    assert.equal(queued.queued, true);
    await assert.rejects(
      e.threads.retry({ threadId: e.threadId, requestKey: "r" }),
      isCode("thread_busy"),
    );
    await e.threads.respond({
      threadId: e.threadId,
      requestKey: "a",
      interactionId: waiting.pending[0].id,
      answers: [{ questionId: "city", value: "Lisbon" }],
    });
    const approval = await e.threads.waitForIdle(e.threadId, { timeoutMs: 10_000 });
    assert.equal(approval.status, "waiting");
    assert.equal(approval.pending[0].kind, "approval");
    const forked = await e.threads.fork({ threadId: e.threadId, requestKey: "f" });
    assert.deepEqual(forked.view.pending, []);
    assert.equal(forked.view.status, "idle");
    assert.equal(forked.view.turns.at(-1)?.outcome, "interrupted");
    await e.threads.respond({
      threadId: e.threadId,
      requestKey: "b",
      interactionId: approval.pending[0].id,
      decision: "approve",
    });
    const done = await until(e, (view) => view.turns.length === 2 && view.status === "idle");
    assert.deepEqual(ran, ["x"]);
    assert.equal(done.queue.length, 0, "the queued input started after the turn completed");
    await e.threads.send({ threadId: forked.threadId, requestKey: "fs", input: { text: "fork" } });
    await e.threads.waitForIdle(forked.threadId, { timeoutMs: 10_000 });
    const forkRequest = e.gateway.requests.at(-1)!;
    assert.equal(userTexts(forkRequest.messages).filter((t) => t.includes("Lisbon")).length, 1);
    assert.equal(
      userTexts(e.gateway.requests[3].messages).filter((t) => t.includes("Lisbon")).length,
      1,
    );
    await e.host.shutdown();
  });
});

describe("updates and restarts around interactions", () => {
  test("subscribers see pending change; a steer while waiting joins the resumed request; public answers survive restart", async () => {
    const store = memoryStore();
    const ran: string[] = [];
    const gateway = scriptedGateway([
      {
        toolCalls: [
          { name: "ask_user", arguments: { questions: [{ id: "q", prompt: "Size?" }] } },
          { name: "write", arguments: { line: "l" } },
        ],
      },
      { text: "ok" },
      { text: "after restart" },
    ]);
    const open = async () => {
      const host = await openHost({ store: keepOpen(store) });
      const threads = host.threads({
        agent: defineAgent({
          id: "a",
          systemPrompt: "s",
          gateway,
          tools: [writeTool(ran)],
          providerRetry: FAST_RETRY,
        }),
      });
      return { host, threads };
    };
    let h = await open();
    const { threadId } = await h.threads.create({ requestKey: "c" });
    const abort = new AbortController();
    const updates = h.threads.subscribe(threadId, { signal: abort.signal });
    const seen: unknown[] = [];
    const reading = (async () => {
      for await (const update of updates) {
        if (update.type === "batch") {
          for (const op of update.ops as { op: string; name?: string; value?: unknown }[]) {
            if (op.op === "component" && op.name === "pending") seen.push(op.value);
          }
        }
      }
    })();
    await h.threads.send({ threadId, requestKey: "s", input: { text: "go" } });
    const waiting = await h.threads.waitForIdle(threadId, { timeoutMs: 10_000 });
    assert.equal(waiting.pending.length, 2);
    await h.threads.steer({ threadId, requestKey: "st", text: "make it large" });
    const question = waiting.pending.find((p) => p.kind === "input")!;
    const approval = waiting.pending.find((p) => p.kind === "approval")!;
    await h.threads.respond({
      threadId,
      requestKey: "a1",
      interactionId: question.id,
      answers: [{ questionId: "q", value: "XL" }],
    });
    await h.threads.respond({
      threadId,
      requestKey: "a2",
      interactionId: approval.id,
      decision: "approve",
    });
    const done = await h.threads.waitForIdle(threadId, { timeoutMs: 10_000 });
    assert.equal(done.status, "idle");
    abort.abort();
    await reading;
    assert.ok(seen.some((value) => Array.isArray(value) && value.length === 2));
    assert.ok(seen.some((value) => Array.isArray(value) && value.length === 0));
    const resumed = gateway.requests[1].messages;
    const texts = userTexts(resumed);
    assert.ok(texts.includes("make it large"));
    assert.equal(texts.filter((t) => t.includes("XL")).length, 1);
    // Tool results come right after the assistant's calls, in call order, before any user message.
    const roles = resumed.map((m) => m.role);
    const assistantAt = roles.indexOf("assistant");
    assert.deepEqual(roles.slice(assistantAt, assistantAt + 3), ["assistant", "tool", "tool"]);
    await h.host.shutdown();

    h = await open();
    await h.threads.send({ threadId, requestKey: "s2", input: { text: "more" } });
    await h.threads.waitForIdle(threadId, { timeoutMs: 10_000 });
    assert.equal(userTexts(gateway.requests[2].messages).filter((t) => t.includes("XL")).length, 1);
    assert.deepEqual(ran, ["l"]);
    await h.host.shutdown();
  });
});
