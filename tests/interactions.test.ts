import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import { defineTool, isFloretError, memoryStore, openHost, type ThreadView } from "@floret/engine";
import { scriptedGateway } from "@floret/engine/testing";
import { defineAgent } from "@floret/engine";
import { addTool, deferred, engine, FAST_RETRY, lastTurn, until } from "./support/engine.ts";

const isCode = (code: string) => (error: unknown) => isFloretError(error) && error.code === code;
const tools = (view: ThreadView) =>
  view.items.filter((item) => item.kind === "tool").map((item) => item.tool!);
const toolMessages = (messages: { role: string }[]) =>
  messages.filter((m) => m.role === "tool") as { role: "tool"; output: string; name: string }[];
const userTexts = (messages: { role: string }[]) =>
  messages.filter((m) => m.role === "user").map((m) => (m as unknown as { text: string }).text);

function writeTool(ran: string[], permission: "ask" | "allow" = "ask") {
  return defineTool({
    name: "write",
    description: "Write a line",
    effect: "write",
    input: z.object({ line: z.string() }),
    permission,
    execute: ({ line }) => {
      ran.push(line);
      return `wrote ${line}`;
    },
  });
}

async function sendWait(e: Awaited<ReturnType<typeof engine>>, text: string) {
  await e.threads.send({ threadId: e.threadId, requestKey: `send:${text}`, input: { text } });
  return await e.threads.waitForIdle(e.threadId, { timeoutMs: 10_000 });
}

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

describe("ask_user", () => {
  test("questions wait; answers are validated; public answers become one user message in later requests", async () => {
    const e = await engine([
      {
        toolCalls: [{
          name: "ask_user",
          arguments: {
            questions: [
              { id: "color", prompt: "Favourite colour?", options: ["red", "blue"] },
              { id: "name", prompt: "Your name?" },
            ],
          },
        }],
      },
      { text: "thanks" },
      { text: "second" },
    ]);
    const waiting = await sendWait(e, "ask me");
    assert.equal(waiting.status, "waiting");
    const question = waiting.pending[0];
    assert.equal(question.kind, "input");
    assert.equal(question.questions?.length, 2);
    const item = waiting.items.find((i) => i.kind === "interaction");
    assert.equal(item?.interaction?.id, question.id);
    const bad = [
      [{ questionId: "color", value: "green" }, { questionId: "name", value: "Al" }],
      [{ questionId: "color", value: "red" }],
      [
        { questionId: "color", value: "red" },
        { questionId: "name", value: "Al" },
        { questionId: "extra", value: "x" },
      ],
      [{ questionId: "color", value: "red" }, { questionId: "name", value: "x".repeat(20_000) }],
    ];
    for (const answers of bad) {
      await assert.rejects(
        e.threads.respond({
          threadId: e.threadId,
          requestKey: "k",
          interactionId: question.id,
          answers,
        }),
        isCode("invalid_input"),
      );
    }
    await assert.rejects(
      e.threads.respond({
        threadId: e.threadId,
        requestKey: "k",
        interactionId: question.id,
        decision: "approve",
      }),
      isCode("invalid_input"),
    );
    await e.threads.respond({
      threadId: e.threadId,
      requestKey: "k",
      interactionId: question.id,
      answers: [{ questionId: "name", value: "Al" }, { questionId: "color", value: "blue" }],
    });
    const done = await e.threads.waitForIdle(e.threadId, { timeoutMs: 10_000 });
    assert.equal(done.status, "idle");
    const second = e.gateway.requests[1].messages;
    assert.match(toolMessages(second)[0].output, /answered/);
    const answers = userTexts(second).filter((t) => t.includes("Al"));
    assert.equal(answers.length, 1);
    assert.match(answers[0], /blue/);
    await sendWait(e, "more");
    const third = e.gateway.requests[2].messages;
    assert.equal(userTexts(third).filter((t) => t.includes("Al")).length, 1, "present once later");
    await e.host.shutdown();
  });

  test("askUser: false removes the tool", async () => {
    const e = await engine([{ text: "hi" }], { agent: { askUser: false } });
    await sendWait(e, "x");
    assert.ok(!e.gateway.requests[0].tools.some((t) => t.name === "ask_user"));
    await e.host.shutdown();
    const f = await engine([{ text: "hi" }]);
    await sendWait(f, "x");
    assert.ok(f.gateway.requests[0].tools.some((t) => t.name === "ask_user"));
    await f.host.shutdown();
  });

  test("a tool result with inputRequired waits; the answer follows the result", async () => {
    const tool = defineTool({
      name: "deploy",
      description: "d",
      input: z.object({}),
      execute: () => ({
        output: "need a region",
        inputRequired: { questions: [{ id: "region", prompt: "Which region?" }] },
      }),
    });
    const e = await engine([
      { toolCalls: [{ name: "deploy", arguments: {} }] },
      { text: "ok" },
    ], { tools: [tool] });
    const waiting = await sendWait(e, "deploy");
    assert.equal(waiting.status, "waiting");
    assert.equal(waiting.pending[0].kind, "input");
    await e.threads.respond({
      threadId: e.threadId,
      requestKey: "k",
      interactionId: waiting.pending[0].id,
      answers: [{ questionId: "region", value: "eu-west" }],
    });
    await e.threads.waitForIdle(e.threadId, { timeoutMs: 10_000 });
    const messages = e.gateway.requests[1].messages;
    assert.equal(toolMessages(messages)[0].output, "need a region");
    assert.match(userTexts(messages).at(-1)!, /eu-west/);
    await e.host.shutdown();
  });
});

describe("secrets", () => {
  test("a secret answer reaches only the resumed run's requests; stores never hold it", async () => {
    const SECRET = "hunter2-very-secret-Zq9";
    const store = memoryStore();
    const events: string[] = [];
    const gateway = scriptedGateway([
      {
        toolCalls: [{
          name: "ask_user",
          arguments: { questions: [{ id: "pw", prompt: "Password?", secret: true }] },
        }],
      },
      { text: "logged in" },
      { text: "later" },
    ]);
    const host = await openHost({ store, onEvent: (event) => events.push(JSON.stringify(event)) });
    const threads = host.threads({
      agent: defineAgent({ id: "a", systemPrompt: "s", gateway, providerRetry: FAST_RETRY }),
    });
    const { threadId } = await threads.create({ requestKey: "c" });
    await threads.send({ threadId, requestKey: "s", input: { text: "login" } });
    const waiting = await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
    await threads.respond({
      threadId,
      requestKey: "r",
      interactionId: waiting.pending[0].id,
      answers: [{ questionId: "pw", value: SECRET }],
    });
    const done = await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
    assert.equal(done.status, "idle");
    assert.ok(JSON.stringify(gateway.requests[1]).includes(SECRET), "the resumed run sends it");
    await threads.send({ threadId, requestKey: "s2", input: { text: "next" } });
    await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
    assert.ok(!JSON.stringify(gateway.requests[2]).includes(SECRET), "later runs do not");
    assert.ok(JSON.stringify(gateway.requests[2]).includes("redacted"));
    assert.ok(!JSON.stringify(done).includes(SECRET), "the view never shows it");
    assert.ok(!events.some((event) => event.includes(SECRET)), "events never carry it");
    assert.ok(events.some((event) => event.includes('"interaction.opened"')));
    assert.ok(events.some((event) => event.includes('"interaction.resolved"')));
    const rows = await store.list({ prefix: [] });
    const needle = new TextEncoder().encode(SECRET);
    assert.equal(rows.filter((row) => contains(row.value, needle)).length, 0);
    await host.shutdown();
  });
});

describe("secrets held for the next run", () => {
  test("a secret answered while an approval is pending reaches the run that the approval starts", async () => {
    const SECRET = "held-secret-QQ41";
    const ran: string[] = [];
    const e = await engine([
      {
        toolCalls: [
          {
            name: "ask_user",
            arguments: { questions: [{ id: "token", prompt: "Token?", secret: true }] },
          },
          { name: "write", arguments: { line: "w" } },
        ],
      },
      { text: "used it" },
    ], { tools: [writeTool(ran)] });
    const waiting = await sendWait(e, "go");
    const question = waiting.pending.find((p) => p.kind === "input")!;
    const approval = waiting.pending.find((p) => p.kind === "approval")!;
    const answered = await e.threads.respond({
      threadId: e.threadId,
      requestKey: "a",
      interactionId: question.id,
      answers: [{ questionId: "token", value: SECRET }],
    });
    assert.equal(answered.view.status, "waiting", "the approval is still pending");
    assert.ok(!JSON.stringify(answered.view).includes(SECRET));
    await e.threads.respond({
      threadId: e.threadId,
      requestKey: "b",
      interactionId: approval.id,
      decision: "approve",
    });
    await e.threads.waitForIdle(e.threadId, { timeoutMs: 10_000 });
    assert.deepEqual(ran, ["w"]);
    assert.ok(JSON.stringify(e.gateway.requests[1].messages).includes(SECRET));
    const rows = await e.store.list({ prefix: [] });
    const needle = new TextEncoder().encode(SECRET);
    assert.equal(rows.filter((row) => contains(row.value, needle)).length, 0);
    await e.host.shutdown();
  });
});

describe("queue, steering, todos, structured", () => {
  test("editQueued checks the expected text; steer joins the running turn's next request", async () => {
    const gate = deferred();
    const slow = defineTool({
      name: "slow",
      description: "s",
      input: z.object({}),
      execute: async () => {
        await gate.promise;
        return "slow done";
      },
    });
    const e = await engine([
      { toolCalls: [{ name: "slow", arguments: {} }] },
      { text: "final" },
      { text: "queued answer" },
    ], { tools: [slow] });
    const { turnId } = await e.threads.send({
      threadId: e.threadId,
      requestKey: "s1",
      input: { text: "first" },
    });
    const queued = await e.threads.send({
      threadId: e.threadId,
      requestKey: "s2",
      input: { text: "later" },
    });
    const queueId = queued.view.queue[0].id;
    await assert.rejects(
      e.threads.editQueued({
        threadId: e.threadId,
        requestKey: "e1",
        queueId,
        text: "edited",
        expectedText: "wrong",
      }),
      isCode("request_conflict"),
    );
    const edited = await e.threads.editQueued({
      threadId: e.threadId,
      requestKey: "e1",
      queueId,
      text: "edited",
      expectedText: "later",
    });
    assert.equal(edited.view.queue[0].text, "edited");
    await until(e, (v) => v.items.some((i) => i.tool?.name === "slow"));
    const steered = await e.threads.steer({
      threadId: e.threadId,
      requestKey: "st",
      text: "use metric units",
    });
    const steerItem = steered.view.items.find((i) => i.text === "use metric units");
    assert.equal(steerItem?.kind, "user");
    assert.equal(steerItem?.turnId, turnId);
    gate.resolve();
    await until(e, (v) => v.turns.length === 2 && v.status === "idle", 10_000);
    assert.ok(userTexts(e.gateway.requests[1].messages).includes("use metric units"));
    assert.deepEqual(userTexts(e.gateway.requests[2].messages).slice(-1), ["edited"]);
    await e.host.shutdown();
  });

  test("steer ends the provider attempt in flight and the turn goes on", async () => {
    const e = await engine([{ hang: true }, { text: "steered answer" }]);
    await e.threads.send({ threadId: e.threadId, requestKey: "s", input: { text: "go" } });
    await until(e, () => e.gateway.requests.length === 1);
    await e.threads.steer({ threadId: e.threadId, requestKey: "st", text: "shorter please" });
    const done = await e.threads.waitForIdle(e.threadId, { timeoutMs: 10_000 });
    assert.deepEqual(lastTurn(done), { outcome: "completed", code: undefined });
    assert.equal(done.turns.length, 1);
    assert.deepEqual(userTexts(e.gateway.requests[1].messages), ["go", "shorter please"]);
    await assert.rejects(
      e.threads.steer({ threadId: e.threadId, requestKey: "st2", text: "x" }),
      isCode("invalid_input"),
    );
    await e.host.shutdown();
  });

  test("todo_write keeps view.todos (replace-all, bounded); structured results round-trip", async () => {
    const when = new Date("2026-01-02T03:04:05.000Z");
    const rich = defineTool({
      name: "rich",
      description: "r",
      input: z.object({}),
      execute: () => ({
        output: "see structured",
        structured: { when, map: new Map([["k", 1n]]), set: new Set([1]), gone: undefined },
      }),
    });
    const store = memoryStore();
    const e = await engine([
      {
        toolCalls: [
          {
            name: "todo_write",
            arguments: {
              todos: [{ text: "one", status: "pending" }, { text: "two", status: "done" }],
            },
          },
          { name: "rich", arguments: {} },
        ],
      },
      {
        toolCalls: [{
          name: "todo_write",
          arguments: { todos: [{ id: "x", text: "only", status: "in_progress" }] },
        }],
      },
      {
        toolCalls: [{
          name: "todo_write",
          arguments: {
            todos: Array.from({ length: 101 }, () => ({ text: "t", status: "pending" })),
          },
        }],
      },
      { text: "done" },
    ], { tools: [rich], store: keepOpen(store) });
    assert.deepEqual((await e.threads.view(e.threadId)).todos, []);
    const view = await sendWait(e, "plan");
    assert.deepEqual(view.todos, [{ id: "x", text: "only", status: "in_progress" }]);
    const structured = view.items.find((i) => i.tool?.name === "rich")!.tool!.structured as {
      when: Date;
      map: Map<string, bigint>;
      set: Set<number>;
      gone: undefined;
    };
    assert.ok(structured.when instanceof Date && structured.when.getTime() === when.getTime());
    assert.equal(structured.map.get("k"), 1n);
    assert.ok(structured.set.has(1));
    assert.ok("gone" in structured);
    assert.ok(!JSON.stringify(e.gateway.requests[1].messages).includes("2026-01-02"));
    await e.host.shutdown();
    const host = await openHost({ store });
    const threads = host.threads({
      agent: defineAgent({ id: "a", systemPrompt: "s", gateway: scriptedGateway([]) }),
    });
    const reloaded = await threads.view(e.threadId);
    assert.deepEqual(reloaded.todos, view.todos);
    const again = reloaded.items.find((i) => i.tool?.name === "rich")!.tool!.structured as {
      when: Date;
    };
    assert.ok(again.when instanceof Date);
    await host.shutdown();
  });
});

function contains(haystack: Uint8Array, needle: Uint8Array): boolean {
  outer: for (let i = 0; i + needle.length <= haystack.length; i++) {
    for (let j = 0; j < needle.length; j++) if (haystack[i + j] !== needle[j]) continue outer;
    return true;
  }
  return false;
}

/** A store whose close() does nothing, so a second host can reopen the same memory. */
function keepOpen(store: ReturnType<typeof memoryStore>): ReturnType<typeof memoryStore> {
  return {
    getMany: (keys) => store.getMany(keys),
    list: (selector, options) => store.list(selector, options),
    commit: (op) => store.commit(op),
    close: async () => {},
  };
}

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
