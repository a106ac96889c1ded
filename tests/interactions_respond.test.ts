// Precise points of DESIGN §8 / §10 and issue #9 about responding: concurrent
// responds, what respond returns, request keys, the items around an approval,
// and the calls that never ask.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import { defineTool, memoryStore } from "@floret/engine";
import { engine, until } from "./support/engine.ts";
import {
  answer,
  askCity,
  contains,
  decide,
  heldTool,
  isCode,
  sendWait,
  settle,
  toolMessages,
  tools,
  writeCalls,
  writeEngine,
  writeTool,
} from "./support/interactions.ts";

describe("respond races and replies", () => {
  test("two concurrent responds with different decisions: one wins, the other conflicts, the tool runs per the winner", async () => {
    const { e, ran } = await writeEngine([writeCalls("a"), { text: "done" }]);
    const waiting = await sendWait(e, "go");
    const id = waiting.pending[0].id;
    const outcomes = await Promise.allSettled([
      decide(e, id, "yes"),
      decide(e, id, "no", "deny"),
    ]);
    const fulfilled = outcomes.filter((o) => o.status === "fulfilled");
    const rejected = outcomes.filter((o) => o.status === "rejected") as PromiseRejectedResult[];
    assert.equal(fulfilled.length, 1, "exactly one resolution wins");
    assert.equal(rejected.length, 1);
    assert.ok(isCode("request_conflict")(rejected[0].reason), String(rejected[0].reason));
    const done = await settle(e);
    assert.equal(done.status, "idle");
    const approved = outcomes[0].status === "fulfilled";
    assert.deepEqual(ran, approved ? ["a"] : []);
    assert.equal(tools(done)[0].status, approved ? "completed" : "denied");
    assert.equal(e.gateway.requests.length, 2, "the model is asked once more, not twice");
    await e.host.shutdown();
  });

  test("two concurrent responds under the same key: both return, the tool runs once", async () => {
    const { e, ran } = await writeEngine([writeCalls("a"), { text: "done" }]);
    const waiting = await sendWait(e, "go");
    const input = {
      threadId: e.threadId,
      requestKey: "same",
      interactionId: waiting.pending[0].id,
      decision: "approve" as const,
    };
    const [a, b] = await Promise.all([e.threads.respond(input), e.threads.respond(input)]);
    assert.notEqual(a.view.status, "waiting");
    assert.notEqual(b.view.status, "waiting");
    await settle(e);
    assert.deepEqual(ran, ["a"]);
    assert.equal(e.gateway.requests.length, 2);
    await e.host.shutdown();
  });

  test("a request key used for one interaction cannot resolve another", async () => {
    const { e, ran } = await writeEngine([writeCalls("1", "2"), { text: "done" }]);
    const waiting = await sendWait(e, "go");
    const [first, second] = waiting.pending;
    const partial = await decide(e, first.id, "k");
    // The approved call dispatches at once; the thread then waits for the other.
    assert.deepEqual(partial.view.pending.map((p) => p.id), [second.id]);
    const mid = await settle(e);
    assert.equal(mid.status, "waiting", "another approval is still pending");
    assert.deepEqual(ran, ["1"]);
    await assert.rejects(
      decide(e, second.id, "k"),
      isCode("request_conflict"),
    );
    await assert.rejects(
      decide(e, "interaction_unknown", "k"),
      isCode("request_conflict"),
      "a used key with another interaction id is no replay",
    );
    const still = await e.threads.view(e.threadId);
    assert.deepEqual(still.pending.map((p) => p.id), [second.id], "nothing written");
    const last = await decide(e, second.id, "k2");
    assert.equal(last.view.status, "running", "resolving the last one admits the run");
    await settle(e);
    assert.deepEqual([...ran].sort(), ["1", "2"]);
    await e.host.shutdown();
  });

  test("an interaction id of another thread, or on an unknown thread, is not found there", async () => {
    const { e, ran } = await writeEngine([writeCalls("a")]);
    const waiting = await sendWait(e, "go");
    const other = await e.threads.create({ requestKey: "other" });
    await assert.rejects(
      decide({ threads: e.threads, threadId: other.threadId }, waiting.pending[0].id),
      isCode("interaction_not_found"),
    );
    await assert.rejects(
      decide({ threads: e.threads, threadId: "thread_missing" }, waiting.pending[0].id),
      isCode("thread_not_found"),
    );
    assert.deepEqual(ran, []);
    await e.host.shutdown();
  });

  test("answers naming a question twice are invalid_input and write nothing", async () => {
    const e = await engine([askCity, { text: "ok" }]);
    const waiting = await sendWait(e, "trip");
    const id = waiting.pending[0].id;
    await assert.rejects(
      answer(
        e,
        id,
        [{ questionId: "city", value: "Oslo" }, { questionId: "city", value: "Rome" }],
        "k",
      ),
      isCode("invalid_input"),
    );
    await assert.rejects(
      answer(e, id, [], "k"),
      isCode("invalid_input"),
    );
    const view = await e.threads.view(e.threadId);
    assert.equal(view.viewVersion, waiting.viewVersion, "nothing written");
    await answer(e, id, [{ questionId: "city", value: "Rome" }], "k");
    const done = await settle(e);
    assert.equal(done.status, "idle");
    await e.host.shutdown();
  });

  test("replaying a resolved question with the same answers runs nothing; other answers conflict", async () => {
    const e = await engine([askCity, { text: "ok" }, { text: "never" }]);
    const waiting = await sendWait(e, "trip");
    const id = waiting.pending[0].id;
    const answers = [{ questionId: "city", value: "Oslo" }];
    await answer(e, id, answers, "a");
    await settle(e);
    const replay = await answer(e, id, answers, "b");
    assert.equal(replay.view.status, "idle");
    await assert.rejects(
      answer(e, id, [{ questionId: "city", value: "Rome" }], "c"),
      isCode("request_conflict"),
    );
    assert.equal(e.gateway.requests.length, 2, "no provider request from replays");
    await e.host.shutdown();
  });
});

describe("items around an approval", () => {
  test("an approved call is pending until dispatch, then running; the item keeps its resolved interaction", async () => {
    const { tool: slow, gate, started } = heldTool({
      name: "deploy",
      output: "deployed",
      effect: "write",
      permission: "ask",
    });
    const e = await engine([
      { toolCalls: [{ name: "deploy", arguments: {} }] },
      { text: "done" },
    ], { tools: [slow] });
    const waiting = await sendWait(e, "go");
    const item = waiting.items.find((i) => i.kind === "tool")!;
    assert.equal(item.tool!.status, "waiting_approval");
    assert.equal(item.interaction?.status, "pending");
    const { view } = await decide(e, waiting.pending[0].id);
    const after = view.items.find((i) => i.id === item.id)!;
    assert.ok(["pending", "running"].includes(after.tool!.status), after.tool!.status);
    assert.equal(after.interaction?.status, "resolved");
    assert.deepEqual(view.pending, []);
    await started.promise;
    const running = await until(
      e,
      (v) => v.items.find((i) => i.id === item.id)!.tool!.status === "running",
    );
    assert.equal(running.status, "running");
    gate.resolve();
    const done = await settle(e);
    assert.equal(done.items.find((i) => i.id === item.id)!.tool!.status, "completed");
    await e.host.shutdown();
  });

  test("a secret question asked by a tool result (inputRequired) reaches only the resumed run", async () => {
    const SECRET = "otp-secret-55Q";
    const tool = defineTool({
      name: "login",
      description: "l",
      input: z.object({}),
      execute: () => ({
        output: "needs a one-time code",
        inputRequired: { questions: [{ id: "otp", prompt: "Code?", secret: true }] },
      }),
    });
    const store = memoryStore();
    const e = await engine([
      { toolCalls: [{ name: "login", arguments: {} }] },
      { text: "in" },
      { text: "later" },
    ], { tools: [tool], store });
    const waiting = await sendWait(e, "login");
    assert.equal(waiting.pending[0].kind, "input");
    assert.deepEqual(waiting.pending[0].questions?.map((q) => q.secret), [true]);
    await answer(e, waiting.pending[0].id, [{ questionId: "otp", value: SECRET }]);
    await settle(e);
    assert.ok(JSON.stringify(e.gateway.requests[1]).includes(SECRET));
    assert.equal(toolMessages(e.gateway.requests[1].messages)[0].output, "needs a one-time code");
    await sendWait(e, "again");
    assert.ok(!JSON.stringify(e.gateway.requests[2]).includes(SECRET));
    const needle = new TextEncoder().encode(SECRET);
    const rows = await store.list({ prefix: [] });
    assert.equal(rows.filter((row) => contains(row.value, needle)).length, 0);
    await e.host.shutdown();
  });
});

describe("what never asks", () => {
  test("a call with invalid arguments never asks approval; its valid sibling does", async () => {
    const ran: string[] = [];
    const e = await engine([
      {
        toolCalls: [
          { name: "write", arguments: { line: 5 } },
          { name: "write", arguments: { line: "ok" } },
        ],
      },
      { text: "done" },
    ], { tools: [writeTool(ran)] });
    const waiting = await sendWait(e, "go");
    assert.equal(waiting.pending.length, 1, "only the valid call asks");
    assert.equal(tools(waiting).length, 1, "the invalid call has no tool item");
    await decide(e, waiting.pending[0].id);
    await settle(e);
    assert.deepEqual(ran, ["ok"]);
    const results = toolMessages(e.gateway.requests[1].messages);
    assert.equal(results.length, 2, "the model hears about both, in call order");
    assert.equal(results[1].output, "wrote ok");
    await e.host.shutdown();
  });
});
