import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import { defineTool, memoryStore } from "@floret/engine";
import { scriptedGateway } from "@floret/engine/testing";
import { addTool, engine, lastTurn, until } from "./support/engine.ts";
import {
  answer,
  askUser,
  decide,
  isCode,
  openOn,
  sendText,
  sendWait,
  settle,
  toolMessages,
  tools,
  userTexts,
  writeCall,
  writeCalls,
  writeEngine,
  writeTool,
} from "./support/interactions.ts";

describe("approvals", () => {
  test("ask puts a durable approval on the tool item; the thread waits; approve runs it once", async () => {
    const { e, ran } = await writeEngine([writeCall("a", "c1"), { text: "done" }]);
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

    const { view } = await decide(e, pending.id, "r1");
    assert.equal(view.status, "running", "respond returns after the run is admitted");
    const done = await settle(e);
    assert.equal(done.status, "idle");
    assert.deepEqual(ran, ["a"]);
    assert.deepEqual(lastTurn(done), { outcome: "completed", code: undefined });
    assert.equal(done.turns.length, 1, "the same turn goes on");
    assert.deepEqual(done.pending, []);
    assert.equal(tools(done)[0].status, "completed");
    assert.equal(toolMessages(e.gateway.requests[1].messages)[0].output, "wrote a");

    // Same decision replays (any key); a different one conflicts; unknown ids are not found.
    await decide(e, pending.id, "r1");
    await decide(e, pending.id, "r1-again");
    await assert.rejects(
      decide(e, pending.id, "r2", "deny"),
      isCode("request_conflict"),
    );
    await assert.rejects(
      decide(e, "interaction_nope", "r3", "deny"),
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
    await decide(e, second.id, "b");
    const mid = await settle(e);
    assert.equal(mid.status, "waiting");
    assert.deepEqual(ran, ["3"], "an approved call runs as soon as it is approved");
    assert.equal(e.gateway.requests.length, 1, "the model waits for the whole batch");
    await decide(e, first.id, "a", "deny");
    const done = await settle(e);
    assert.equal(done.status, "idle");
    assert.deepEqual(ran, ["3"]);
    assert.deepEqual(tools(done).map((t) => t.status), ["denied", "completed", "completed"]);
    const results = toolMessages(e.gateway.requests[1].messages);
    assert.deepEqual(results.map((r) => r.output.slice(0, 9)), ["The user ", "3", "wrote 3"]);
    assert.match(results[0].output, /denied/);
    await e.host.shutdown();
  });

  test("approvals answered at the same moment run each call once", async () => {
    const { e, ran } = await writeEngine([writeCalls("1", "2", "3"), { text: "done" }]);
    const waiting = await sendWait(e, "go");
    await Promise.all(
      waiting.pending.flatMap((pending, i) =>
        [0, 1].map((copy) => decide(e, pending.id, `r${i}:${copy}`))
      ),
    );
    const done = await settle(e);
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
      writeCalls("x"),
      { text: "done" },
    ], { tools: [tool] });
    const waiting = await sendWait(e, "go");
    const id = waiting.pending[0].id;
    await assert.rejects(
      answer(e, id, [{ questionId: "q", value: "v" }], "k"),
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
    await decide(e, id, "k");
    await settle(e);
    assert.deepEqual(ran, ["x"]);
    await e.host.shutdown();
  });

  test("approvals survive a host restart; cancel while waiting resolves them as cancelled and runs nothing", async () => {
    const store = memoryStore();
    const ran: string[] = [];
    const gateway = scriptedGateway([
      writeCalls("a"),
      { text: "done" },
      writeCalls("b"),
    ]);
    const open = () => openOn(store, gateway, { tools: [writeTool(ran)] });
    let h = await open();
    const { threadId } = await h.threads.create({ requestKey: "c" });
    await sendText({ threads: h.threads, threadId }, "go", "s");
    const before = await settle({ threads: h.threads, threadId });
    await h.host.shutdown();

    h = await open();
    const reopened = await h.threads.view(threadId);
    assert.equal(reopened.status, "waiting");
    assert.deepEqual(reopened.pending.map((p) => p.id), before.pending.map((p) => p.id));
    await decide({ threads: h.threads, threadId }, reopened.pending[0].id);
    const done = await settle({ threads: h.threads, threadId });
    assert.equal(done.status, "idle");
    assert.deepEqual(ran, ["a"]);

    await sendText({ threads: h.threads, threadId }, "again", "s2");
    const waiting = await settle({ threads: h.threads, threadId });
    assert.equal(waiting.status, "waiting");
    const pendingId = waiting.pending[0].id;
    const { view } = await h.threads.cancel({ threadId, requestKey: "x" });
    assert.equal(view.status, "idle");
    assert.deepEqual(view.pending, []);
    assert.equal(view.turns.at(-1)?.outcome, "cancelled");
    assert.equal(tools(view).at(-1)?.status, "cancelled");
    await assert.rejects(
      decide({ threads: h.threads, threadId }, pendingId, "late"),
      isCode("request_conflict"),
    );
    assert.deepEqual(ran, ["a"]);
    await h.host.shutdown();
  });
});

describe("cancel, fork and the queue around interactions", () => {
  test("graceful cancel keeps the streamed text as a settled assistant item; includeDescendants is accepted", async () => {
    const e = await engine([{ hang: true, text: "half an answer" }]);
    await sendText(e, "go", "s");
    await until(e, (view) => view.items.some((item) => item.kind === "assistant"));
    const { view } = await e.threads.cancel({
      threadId: e.threadId,
      requestKey: "c",
      mode: "graceful",
      includeDescendants: true,
    });
    assert.notEqual(view.status, "running");
    const idle = await settle(e);
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
      askUser([{ id: "city", prompt: "Which city?" }]),
      writeCalls("x"),
      { text: "done" },
      { text: "queued reply" },
      { text: "fork reply" },
    ], { tools: [writeTool(ran)] });
    const waiting = await sendWait(e, "plan a trip");
    const queued = await sendText(e, "and then?", "q");
    assert.equal(queued.queued, true);
    await assert.rejects(
      e.threads.retry({ threadId: e.threadId, requestKey: "r" }),
      isCode("thread_busy"),
    );
    await answer(e, waiting.pending[0].id, [{ questionId: "city", value: "Lisbon" }], "a");
    const approval = await settle(e);
    assert.equal(approval.status, "waiting");
    assert.equal(approval.pending[0].kind, "approval");
    const forked = await e.threads.fork({ threadId: e.threadId, requestKey: "f" });
    assert.deepEqual(forked.view.pending, []);
    assert.equal(forked.view.status, "idle");
    assert.equal(forked.view.turns.at(-1)?.outcome, "interrupted");
    await decide(e, approval.pending[0].id, "b");
    const done = await until(e, (view) => view.turns.length === 2 && view.status === "idle");
    assert.deepEqual(ran, ["x"]);
    assert.equal(done.queue.length, 0, "the queued input started after the turn completed");
    await sendText({ threads: e.threads, threadId: forked.threadId }, "fork", "fs");
    await settle({ threads: e.threads, threadId: forked.threadId });
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
    const open = () => openOn(store, gateway, { tools: [writeTool(ran)] });
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
    await sendText({ threads: h.threads, threadId }, "go", "s");
    const waiting = await settle({ threads: h.threads, threadId });
    assert.equal(waiting.pending.length, 2);
    await h.threads.steer({ threadId, requestKey: "st", text: "make it large" });
    const question = waiting.pending.find((p) => p.kind === "input")!;
    const approval = waiting.pending.find((p) => p.kind === "approval")!;
    await answer(
      { threads: h.threads, threadId },
      question.id,
      [{ questionId: "q", value: "XL" }],
      "a1",
    );
    await decide({ threads: h.threads, threadId }, approval.id, "a2");
    const done = await settle({ threads: h.threads, threadId });
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
    await sendText({ threads: h.threads, threadId }, "more", "s2");
    await settle({ threads: h.threads, threadId });
    assert.equal(userTexts(gateway.requests[2].messages).filter((t) => t.includes("XL")).length, 1);
    assert.deepEqual(ran, ["l"]);
    await h.host.shutdown();
  });
});
