// Precise points of DESIGN §8 / §10 and issue #9 about pending questions and
// secrets across restart.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { memoryStore } from "@floret/engine";
import { type ScriptStep } from "@floret/engine/testing";
import { lastTurn } from "./support/engine.ts";
import {
  answer,
  askUser,
  contains,
  decide,
  isCode,
  openOn,
  sendText,
  settle,
  toolMessages,
  tools,
  userTexts,
  writeCalls,
  writeTool,
} from "./support/interactions.ts";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("questions across restart", () => {
  const open = (
    store: ReturnType<typeof memoryStore>,
    steps: ScriptStep[],
    events: string[] = [],
  ) => openOn(store, steps, { events });
  const askSecret: ScriptStep = askUser([
    { id: "pw", prompt: "Password?", secret: true },
    { id: "user", prompt: "User?" },
  ]);

  test("a pending secret question survives restart with the same id; its answer reaches the resumed run only", async () => {
    const SECRET = "pending-secret-R7x";
    const store = memoryStore();
    const events: string[] = [];
    let h = await open(store, [askSecret], events);
    const { threadId } = await h.threads.create({ requestKey: "c" });
    await sendText({ threads: h.threads, threadId }, "login", "s");
    const before = await settle({ threads: h.threads, threadId });
    await h.host.shutdown();

    h = await open(store, [{ text: "in" }, { text: "later" }], events);
    const after = await h.threads.view(threadId);
    assert.equal(after.status, "waiting");
    assert.deepEqual(after.pending.map((p) => p.id), before.pending.map((p) => p.id));
    assert.deepEqual(after.pending[0].questions, before.pending[0].questions);
    await answer({ threads: h.threads, threadId }, after.pending[0].id, [{
      questionId: "pw",
      value: SECRET,
    }, { questionId: "user", value: "ada" }]);
    const done = await settle({ threads: h.threads, threadId });
    assert.equal(done.status, "idle");
    assert.deepEqual(done.pending, []);
    assert.ok(JSON.stringify(h.gateway.requests[0]).includes(SECRET));
    assert.equal(
      userTexts(h.gateway.requests[0].messages).filter((t) => t.includes("ada")).length,
      1,
    );
    await h.host.shutdown();

    // The run ended normally: nothing is asked again after another restart.
    h = await open(store, [{ text: "later" }], events);
    const reopened = await h.threads.view(threadId);
    assert.equal(reopened.status, "idle");
    assert.deepEqual(reopened.pending, []);
    await sendText({ threads: h.threads, threadId }, "more", "s2");
    await settle({ threads: h.threads, threadId });
    const later = JSON.stringify(h.gateway.requests[0]);
    assert.ok(!later.includes(SECRET));
    assert.ok(later.includes("ada"), "public answers stay");
    assert.ok(!events.some((event) => event.includes(SECRET)), "events never carry the secret");
    const needle = new TextEncoder().encode(SECRET);
    const rows = await store.list({ prefix: [] });
    assert.equal(rows.filter((row) => contains(row.value, needle)).length, 0);
    await h.host.shutdown();
  });

  test("a secret whose resumed run was cut by a restart is asked again as a new pending interaction", async () => {
    const SECRET = "lost-secret-M2p";
    const store = memoryStore();
    let h = await open(store, [askSecret, { hang: true } as ScriptStep]);
    const { threadId } = await h.threads.create({ requestKey: "c" });
    await sendText({ threads: h.threads, threadId }, "login", "s");
    const waiting = await settle({ threads: h.threads, threadId });
    const firstId = waiting.pending[0].id;
    await answer({ threads: h.threads, threadId }, firstId, [{ questionId: "pw", value: SECRET }, {
      questionId: "user",
      value: "ada",
    }]);
    // The resumed run is in flight (its request hangs) when the host goes away.
    for (let i = 0; i < 5000 && h.gateway.requests.length < 2; i++) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    assert.equal(h.gateway.requests.length, 2);
    assert.ok(JSON.stringify(h.gateway.requests[1]).includes(SECRET));
    await h.host.shutdown();

    h = await open(store, [{ text: "thanks" }]);
    const after = await h.threads.view(threadId);
    assert.equal(after.status, "waiting", "the secret question is asked again");
    assert.equal(after.pending.length, 1);
    assert.notEqual(after.pending[0].id, firstId, "as a new interaction");
    assert.equal(after.pending[0].kind, "input");
    assert.ok(after.pending[0].questions?.some((q) => q.id === "pw" && q.secret));
    // The old interaction is resolved: other public answers conflict; the same public
    // answers (secret values are never kept, so never compared) replay and run nothing.
    await assert.rejects(
      answer({ threads: h.threads, threadId }, firstId, [{ questionId: "pw", value: "x" }, {
        questionId: "user",
        value: "bob",
      }], "old"),
      isCode("request_conflict"),
    );
    const replay = await answer({ threads: h.threads, threadId }, firstId, [{
      questionId: "pw",
      value: "x",
    }, { questionId: "user", value: "ada" }], "old2");
    assert.equal(replay.view.status, "waiting");
    assert.equal(h.gateway.requests.length, 0, "a replay runs nothing");
    const questions = after.pending[0].questions!;
    await answer(
      { threads: h.threads, threadId },
      after.pending[0].id,
      questions.map((q) => ({ questionId: q.id, value: q.id === "pw" ? SECRET : "ada" })),
      "r2",
    );
    const done = await settle({ threads: h.threads, threadId });
    assert.equal(done.status, "idle");
    assert.ok(JSON.stringify(h.gateway.requests[0]).includes(SECRET));
    const needle = new TextEncoder().encode(SECRET);
    const rows = await store.list({ prefix: [] });
    assert.equal(rows.filter((row) => contains(row.value, needle)).length, 0);
    await h.host.shutdown();
  });
});

describe("a half-answered batch across restart", () => {
  test("one approval answered and run before a restart, the other after: each runs once, results in call order", async () => {
    const store = memoryStore();
    const ran: string[] = [];
    const open = (steps: ScriptStep[]) => openOn(store, steps, { tools: [writeTool(ran)] });
    let h = await open([writeCalls("1", "2")]);
    const { threadId } = await h.threads.create({ requestKey: "c" });
    await sendText({ threads: h.threads, threadId }, "go", "s");
    const waiting = await settle({ threads: h.threads, threadId });
    const [first, second] = waiting.pending;
    await decide({ threads: h.threads, threadId }, second.id, "b");
    const mid = await settle({ threads: h.threads, threadId });
    assert.equal(mid.status, "waiting");
    assert.deepEqual(ran, ["2"]);
    await h.host.shutdown();

    h = await open([{ text: "done" }]);
    const reopened = await h.threads.view(threadId);
    assert.equal(reopened.status, "waiting");
    assert.deepEqual(reopened.pending.map((p) => p.id), [first.id]);
    assert.deepEqual(tools(reopened).map((t) => t.status), ["waiting_approval", "completed"]);
    await decide({ threads: h.threads, threadId }, first.id, "a");
    const done = await settle({ threads: h.threads, threadId });
    assert.equal(done.status, "idle");
    assert.deepEqual(ran, ["2", "1"]);
    assert.deepEqual(toolMessages(h.gateway.requests[0].messages).map((m) => m.output), [
      "wrote 1",
      "wrote 2",
    ]);
    await h.host.shutdown();
  });
});

describe("a held secret across restart", () => {
  test("a secret answered while an approval waits, lost to a restart before any run got it, is asked again before the run starts", async () => {
    const SECRET = "held-then-lost-Wq2";
    const store = memoryStore();
    const ran: string[] = [];
    const open = (steps: ScriptStep[]) => openOn(store, steps, { tools: [writeTool(ran)] });
    let h = await open([{
      toolCalls: [
        {
          name: "ask_user",
          arguments: { questions: [{ id: "token", prompt: "Token?", secret: true }] },
        },
        { name: "write", arguments: { line: "w" } },
      ],
    }]);
    const { threadId } = await h.threads.create({ requestKey: "c" });
    await sendText({ threads: h.threads, threadId }, "go", "s");
    const waiting = await settle({ threads: h.threads, threadId });
    const question = waiting.pending.find((p) => p.kind === "input")!;
    const approval = waiting.pending.find((p) => p.kind === "approval")!;
    await answer({ threads: h.threads, threadId }, question.id, [{
      questionId: "token",
      value: SECRET,
    }], "a");
    await h.host.shutdown();

    h = await open([{ text: "used it" }]);
    const reopened = await h.threads.view(threadId);
    assert.equal(reopened.status, "waiting");
    assert.deepEqual(reopened.pending.map((p) => p.id), [approval.id]);
    // The approval would start the run; the run would lack the secret: it is asked again first.
    const approved = await decide({ threads: h.threads, threadId }, approval.id, "b");
    assert.equal(approved.view.status, "waiting");
    const again = approved.view.pending.find((p) => p.kind === "input");
    assert.ok(again, "the secret question is asked again: no run ever had the answer");
    assert.notEqual(again.id, question.id);
    assert.deepEqual(again.questions?.map((q) => [q.id, q.secret]), [["token", true]]);
    assert.deepEqual(ran, [], "the approved call waits for the run");
    assert.equal(h.gateway.requests.length, 0);
    await answer({ threads: h.threads, threadId }, again.id, [{
      questionId: "token",
      value: SECRET,
    }], "a2");
    const done = await settle({ threads: h.threads, threadId });
    assert.equal(done.status, "idle");
    assert.deepEqual(ran, ["w"]);
    assert.ok(JSON.stringify(h.gateway.requests[0]).includes(SECRET), "the resumed run has it");
    await h.host.shutdown();
  });
});

describe("a secret whose run ended normally", () => {
  test("is not asked again when a later run of the same turn is cut by a restart", async () => {
    const SECRET = "ended-normally-Jj7";
    const store = memoryStore();
    const ran: string[] = [];
    const open = (steps: ScriptStep[]) => openOn(store, steps, { tools: [writeTool(ran)] });
    let h = await open([
      askUser([{ id: "token", prompt: "Token?", secret: true }]),
      writeCalls("w"),
      { hang: true } as ScriptStep,
    ]);
    const { threadId } = await h.threads.create({ requestKey: "c" });
    await sendText({ threads: h.threads, threadId }, "go", "s");
    const asked = await settle({ threads: h.threads, threadId });
    await answer({ threads: h.threads, threadId }, asked.pending[0].id, [{
      questionId: "token",
      value: SECRET,
    }], "a");
    // The run that had the secret asks for an approval and ends normally (the turn waits).
    const approval = await settle({ threads: h.threads, threadId });
    assert.equal(approval.pending[0].kind, "approval");
    assert.ok(JSON.stringify(h.gateway.requests[1]).includes(SECRET));
    await decide({ threads: h.threads, threadId }, approval.pending[0].id, "b");
    for (let i = 0; i < 5000 && h.gateway.requests.length < 3; i++) {
      await sleep(5);
    }
    assert.equal(h.gateway.requests.length, 3, "the next run is in flight");
    assert.ok(!JSON.stringify(h.gateway.requests[2]).includes(SECRET), "it never had the secret");
    await h.host.shutdown();

    h = await open([]);
    const after = await h.threads.view(threadId);
    assert.deepEqual(after.pending, [], "nothing is asked again");
    assert.equal(after.status, "idle");
    assert.deepEqual(lastTurn(after), { outcome: "interrupted", code: "interrupted" });
    assert.deepEqual(ran, ["w"]);
    await h.host.shutdown();
  });
});
