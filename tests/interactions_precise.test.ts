// Precise points of DESIGN §8 / §10 and issue #9 that the broader interaction
// tests leave open: concurrent responds, what respond returns, cancel while a
// question waits, partial text on an immediate cancel, a graceful cancel's
// drain window, pending questions across restart, and observation events.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import {
  defineAgent,
  defineTool,
  type Gateway,
  memoryStore,
  openHost,
  ProviderError,
  type ProviderEvent,
} from "@floret/engine";
import { scriptedGateway, type ScriptStep } from "@floret/engine/testing";
import { deferred, engine, FAST_RETRY, lastTurn, until } from "./support/engine.ts";
import { overHttp } from "./support/over_http.ts";
import {
  answer,
  askUser,
  contains,
  decide,
  editQueued,
  heldTool,
  isCode,
  keepOpen,
  openOn,
  sendText,
  sendWait,
  settle,
  steer,
  toolMessages,
  tools,
  userTexts,
  writeCalls,
  writeEngine,
  writeTool,
} from "./support/interactions.ts";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const askCity: ScriptStep = askUser([{
  id: "city",
  prompt: "Which city?",
  options: ["Oslo", "Rome"],
}]);

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

describe("cancel around interactions", () => {
  test("cancel while a question waits resolves it as cancelled, runs nothing, and a later answer conflicts", async () => {
    const e = await engine([askCity, { text: "never" }]);
    const waiting = await sendWait(e, "trip");
    const id = waiting.pending[0].id;
    const queued = await sendText(e, "queued while waiting", "q");
    assert.equal(queued.queued, true);
    const { view } = await e.threads.cancel({ threadId: e.threadId, requestKey: "x" });
    assert.equal(view.status, "idle");
    assert.deepEqual(view.pending, []);
    assert.equal(view.turns.at(-1)?.outcome, "cancelled");
    const item = view.items.find((i) => i.kind === "interaction");
    assert.equal(item?.interaction?.status, "resolved");
    assert.equal(view.queue.length, 1, "input queued behind a cancelled turn stays queued");
    await assert.rejects(
      answer(e, id, [{ questionId: "city", value: "Oslo" }], "late"),
      isCode("request_conflict"),
    );
    const again = await e.threads.cancel({ threadId: e.threadId, requestKey: "x2" });
    assert.equal(again.view.status, "idle", "cancel on an idle thread is no error");
    assert.equal(e.gateway.requests.length, 1, "nothing ran after the cancel");
    await e.host.shutdown();
  });

  test("graceful cancel while an approval waits runs nothing either", async () => {
    const { e, ran } = await writeEngine([writeCalls("a"), { text: "never" }]);
    await sendWait(e, "go");
    const { view } = await e.threads.cancel({
      threadId: e.threadId,
      requestKey: "x",
      mode: "graceful",
    });
    const idle = await settle(e);
    assert.notEqual(view.status, "running");
    assert.equal(idle.turns.at(-1)?.outcome, "cancelled");
    assert.equal(tools(idle)[0].status, "cancelled");
    assert.deepEqual(idle.pending, []);
    assert.deepEqual(ran, []);
    assert.equal(e.gateway.requests.length, 1);
    await e.host.shutdown();
  });

  test("immediate cancel keeps the text a provider had streamed so far", async () => {
    const e = await engine([{ hang: true, text: "the first half" } as ScriptStep]);
    await sendText(e, "go", "s");
    await until(e, (view) => view.items.some((item) => item.kind === "assistant"));
    const { view } = await e.threads.cancel({ threadId: e.threadId, requestKey: "c" });
    assert.notEqual(view.status, "running");
    assert.deepEqual(lastTurn(view), { outcome: "cancelled", code: undefined });
    const assistant = view.items.find((item) => item.kind === "assistant");
    assert.equal(assistant?.text, "the first half");
    assert.ok(!assistant?.live);
    await e.host.shutdown();
  });

  test("graceful cancel lets an in-flight tool commit its result inside the window; nothing more runs", async () => {
    const { tool: slow, gate, started, aborted } = heldTool({
      name: "slow",
      output: "finished",
      effect: "write",
    });
    const e = await engine([
      { toolCalls: [{ name: "slow", arguments: {} }] },
      { text: "never" },
    ], { tools: [slow] });
    await sendText(e, "go", "s");
    await started.promise;
    const cancelling = e.threads.cancel({
      threadId: e.threadId,
      requestKey: "c",
      mode: "graceful",
    });
    await until(e, (view) => view.status !== "running");
    gate.resolve();
    await cancelling;
    const idle = await settle(e);
    assert.equal(aborted(), false, "the tool was not aborted inside the window");
    assert.equal(tools(idle)[0].status, "completed");
    assert.equal(tools(idle)[0].output, "finished");
    assert.equal(idle.turns.at(-1)?.outcome, "cancelled");
    assert.equal(e.gateway.requests.length, 1, "the result never reaches a new request");
    await e.host.shutdown();
  });

  test("immediate cancel of a dispatched write whose result is unconfirmed: unknown, effect_outcome_unknown", async () => {
    const started = deferred();
    const hang = defineTool({
      name: "hang",
      description: "h",
      effect: "write",
      input: z.object({}),
      execute: async () => {
        started.resolve();
        await new Promise(() => {});
        return "never";
      },
    });
    const e = await engine([{ toolCalls: [{ name: "hang", arguments: {} }] }], { tools: [hang] });
    await sendText(e, "go", "s");
    await started.promise;
    const { view } = await e.threads.cancel({ threadId: e.threadId, requestKey: "c" });
    assert.notEqual(view.status, "running");
    assert.equal(tools(view)[0].status, "unknown");
    assert.deepEqual(lastTurn(view), { outcome: "failed", code: "effect_outcome_unknown" });
    await e.host.shutdown();
  });
});

describe("graceful cancel's window", () => {
  // The window is 5 s by contract; Bun's default per-test limit is also 5 s.
  test(
    "tools still running when the shared window closes: a write is unknown, a read cancelled, the turn failed",
    {
      timeout: 60_000,
    },
    async () => {
      let started = 0;
      const reached = deferred();
      const never = (name: string, effect: "write" | "read") =>
        defineTool({
          name,
          description: name,
          effect,
          input: z.object({}),
          // Ignores its abort signal: only the window can end the wait for it.
          execute: async () => {
            if (++started === 2) reached.resolve();
            await new Promise(() => {});
            return "never";
          },
        });
      const e = await engine([
        { toolCalls: [{ name: "w", arguments: {} }, { name: "r", arguments: {} }] },
        { text: "never" },
      ], { tools: [never("w", "write"), never("r", "read")] });
      await sendText(e, "go", "s");
      await reached.promise;
      const { view } = await e.threads.cancel({
        threadId: e.threadId,
        requestKey: "c",
        mode: "graceful",
      });
      assert.notEqual(view.status, "running");
      assert.notEqual(view.status, "stopping");
      assert.deepEqual(tools(view).map((t) => t.status), ["unknown", "cancelled"]);
      assert.deepEqual(lastTurn(view), { outcome: "failed", code: "effect_outcome_unknown" });
      assert.equal(e.gateway.requests.length, 1);
      await e.host.shutdown();
    },
  );
});

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
    for (let i = 0; i < 500 && h.gateway.requests.length < 2; i++) {
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
    for (let i = 0; i < 500 && h.gateway.requests.length < 3; i++) {
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

describe("steer, queue and todos precise points", () => {
  test("steer adds a user item to the running turn; its text is in the turn's next request", async () => {
    const { tool: slow, gate, started } = heldTool({ name: "slow", output: "slow done" });
    const e = await engine([
      { toolCalls: [{ name: "slow", arguments: {} }] },
      { text: "steered" },
    ], { tools: [slow] });
    const sent = await sendText(e, "go", "s");
    await started.promise;
    const { view } = await steer(e, "be brief", "st");
    const steered = view.items.filter((i) => i.kind === "user").at(-1);
    assert.equal(steered?.text, "be brief");
    assert.equal(steered?.turnId, sent.turnId, "same turn");
    gate.resolve();
    const done = await settle(e);
    assert.equal(done.turns.length, 1);
    assert.ok(userTexts(e.gateway.requests[1].messages).includes("be brief"));
    assert.equal(toolMessages(e.gateway.requests[1].messages)[0].output, "slow done");
    await e.host.shutdown();
  });

  test("a new thread has no todos; editQueued with a stale expected text conflicts and writes nothing", async () => {
    const e = await engine([askCity]);
    const fresh = await e.threads.view(e.threadId);
    assert.deepEqual((fresh as unknown as { todos: unknown[] }).todos, []);
    await sendWait(e, "trip");
    const queued = await sendText(e, "first text", "q");
    const queueId = queued.view.queue[0].id;
    await assert.rejects(
      editQueued(e, queueId, "new", "not the text", "e"),
      isCode("request_conflict"),
    );
    const view = await e.threads.view(e.threadId);
    assert.equal(view.queue[0].text, "first text");
    await assert.rejects(
      e.threads.promoteQueued({ threadId: e.threadId, requestKey: "p", queueId }),
      isCode("thread_busy"),
    );
    await e.host.shutdown();
  });
});

describe("structured results", () => {
  test("Date, Map, Set, BigInt, undefined and NaN read back decoded: live, after restart, in a fork; the model sees output only", async () => {
    const value = () => ({
      when: new Date("2026-03-04T05:06:07.000Z"),
      index: new Map<string, unknown>([["a", new Set([1, 2])], ["b", { at: new Date(0) }]]),
      big: 12345678901234567890n,
      missing: undefined,
      list: [undefined, Number.NaN, -Infinity, "x"],
      plain: { n: 1, s: "two", t: true, z: null },
      re: /a+b/gi,
      negativeZero: -0,
      url: new URL("https://example.test/a?b=1"), // read back as JSON would write it: its text
    });
    const rich = defineTool({
      name: "rich",
      description: "r",
      input: z.object({}),
      execute: () => ({ output: "see structured", structured: value() }),
    });
    const store = memoryStore();
    const e = await engine([
      { toolCalls: [{ name: "rich", arguments: {} }] },
      { text: "done" },
    ], { tools: [rich], store: keepOpen(store) });
    const live = await sendWait(e, "go");
    const item = () => live.items.find((i) => i.tool?.name === "rich")!.tool!;
    assert.equal(item().status, "completed");
    const expected = () => ({ ...value(), url: "https://example.test/a?b=1" });
    assert.deepEqual(item().structured, expected());
    const structured = item().structured as ReturnType<typeof value>;
    assert.ok(structured.when instanceof Date);
    assert.ok("missing" in structured, "an undefined member is kept");
    assert.equal(toolMessages(e.gateway.requests[1].messages)[0].output, "see structured");
    assert.ok(!JSON.stringify(e.gateway.requests[1].messages).includes("2026-03-04"));
    const forked = await e.threads.fork({ threadId: e.threadId, requestKey: "f" });
    const forkItem = forked.view.items.find((i) => i.tool?.name === "rich")!.tool!;
    assert.deepEqual(forkItem.structured, expected());
    // Over HTTP the view is JSON: readable, never a failed response.
    const remote = await overHttp(e.threads).view(e.threadId);
    const wire = remote.items.find((i) => i.tool?.name === "rich")!.tool!.structured as Record<
      string,
      unknown
    >;
    assert.equal(wire.when, "2026-03-04T05:06:07.000Z");
    assert.equal(wire.big, "12345678901234567890");
    await e.host.shutdown();

    const host = await openHost({ store });
    const threads = host.threads({
      agent: defineAgent({ id: "a", systemPrompt: "s", gateway: scriptedGateway([]) }),
    });
    const reloaded = await threads.view(e.threadId);
    const again = reloaded.items.find((i) => i.tool?.name === "rich")!.tool!;
    assert.deepEqual(again.structured, expected());
    const history = await threads.history(e.threadId);
    assert.deepEqual(
      history.items.find((i) => i.tool?.name === "rich")!.tool!.structured,
      expected(),
    );
    await host.shutdown();
  });

  test("a cycle, a function or a symbol is refused as the call's error the model sees; the turn goes on", async () => {
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    const shared = { x: 1 };
    const values: unknown[] = [cyclic, { f: () => 1 }, { s: Symbol("s") }, {
      one: shared,
      two: shared,
    }];
    const tool = defineTool({
      name: "odd",
      description: "o",
      input: z.object({ i: z.number() }),
      execute: ({ i }) => ({ output: `value ${i}`, structured: values[i] }),
    });
    const e = await engine([
      { toolCalls: values.map((_, i) => ({ name: "odd", arguments: { i } })) },
      { text: "done" },
    ], { tools: [tool] });
    const view = await sendWait(e, "go");
    assert.equal(view.turns[0].outcome, "completed");
    assert.deepEqual(tools(view).map((t) => t.status), ["error", "error", "error", "completed"]);
    const outputs = toolMessages(e.gateway.requests[1].messages).map((m) => m.output);
    assert.match(outputs[0], /cycle/);
    assert.match(outputs[1], /function/);
    assert.match(outputs[2], /symbol/);
    assert.deepEqual(
      tools(view)[3].structured,
      { one: { x: 1 }, two: { x: 1 } },
      "a shared object is no cycle",
    );
    await e.host.shutdown();
  });
});

describe("secrets in what a run reports", () => {
  test("a provider error echoing the request never carries the secret into events, the view or the store", async () => {
    const SECRET = "echoed-secret-Kp3";
    let calls = 0;
    // Answers the first request with the question; then fails, quoting the request it got.
    const gateway: Gateway = {
      info: { provider: "echo", model: "echo", stateKey: "echo", capabilities: {} },
      async *stream(request): AsyncIterable<ProviderEvent> {
        calls++;
        if (calls === 1) {
          yield { type: "tool-call-start", callId: "c1", name: "ask_user" };
          yield {
            type: "tool-call-delta",
            callId: "c1",
            argumentsDelta: JSON.stringify({
              questions: [{ id: "pw", prompt: "Password?", secret: true }],
            }),
          };
          yield { type: "tool-call-end", callId: "c1" };
          yield { type: "finish", reason: "tool_calls" };
          return;
        }
        const echo = `bad request: ${JSON.stringify(request.messages).slice(-400)}`;
        throw new ProviderError(echo, { retry: calls === 2 ? "retryable" : "never", status: 400 });
      },
    };
    const store = memoryStore();
    const events: string[] = [];
    const host = await openHost({ store, onEvent: (event) => events.push(JSON.stringify(event)) });
    const threads = host.threads({
      agent: defineAgent({ id: "a", systemPrompt: "s", gateway, providerRetry: FAST_RETRY }),
    });
    const { threadId } = await threads.create({ requestKey: "c" });
    await sendText({ threads, threadId }, "login", "s");
    const waiting = await settle({ threads: threads, threadId });
    await answer({ threads: threads, threadId }, waiting.pending[0].id, [{
      questionId: "pw",
      value: SECRET,
    }]);
    const done = await settle({ threads: threads, threadId });
    assert.equal(calls, 3);
    assert.equal(done.turns.at(-1)?.failure?.code, "provider_error");
    assert.match(done.turns.at(-1)!.failure!.message, /bad request/);
    assert.ok(!JSON.stringify(done).includes(SECRET), "the view never shows it");
    assert.ok(events.some((event) => event.includes("provider.retry")));
    assert.ok(!events.some((event) => event.includes(SECRET)), "events never carry it");
    const needle = new TextEncoder().encode(SECRET);
    const rows = await store.list({ prefix: [] });
    assert.equal(rows.filter((row) => contains(row.value, needle)).length, 0);
    await host.shutdown();
  });
});
