import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import { defineAgent, defineTool, memoryStore, openHost } from "@floret/engine";
import { scriptedGateway } from "@floret/engine/testing";
import { engine, FAST_RETRY, lastTurn, until } from "./support/engine.ts";
import {
  answer,
  askUser,
  contains,
  decide,
  editQueued,
  heldTool,
  isCode,
  keepOpen,
  sendText,
  sendWait,
  settle,
  steer,
  toolMessages,
  userTexts,
  writeTool,
} from "./support/interactions.ts";

describe("ask_user", () => {
  test("questions wait; answers are validated; public answers become one user message in later requests", async () => {
    const e = await engine([
      askUser([
        { id: "color", prompt: "Favourite colour?", options: ["red", "blue"] },
        { id: "name", prompt: "Your name?" },
      ]),
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
        answer(e, question.id, answers, "k"),
        isCode("invalid_input"),
      );
    }
    await assert.rejects(
      decide(e, question.id, "k"),
      isCode("invalid_input"),
    );
    await answer(e, question.id, [{ questionId: "name", value: "Al" }, {
      questionId: "color",
      value: "blue",
    }], "k");
    const done = await settle(e);
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
    await answer(e, waiting.pending[0].id, [{ questionId: "region", value: "eu-west" }], "k");
    await settle(e);
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
      askUser([{ id: "pw", prompt: "Password?", secret: true }]),
      { text: "logged in" },
      { text: "later" },
    ]);
    const host = await openHost({ store, onEvent: (event) => events.push(JSON.stringify(event)) });
    const threads = host.threads({
      agent: defineAgent({ id: "a", systemPrompt: "s", gateway, providerRetry: FAST_RETRY }),
    });
    const { threadId } = await threads.create({ requestKey: "c" });
    await sendText({ threads, threadId }, "login", "s");
    const waiting = await settle({ threads, threadId });
    await answer({ threads, threadId }, waiting.pending[0].id, [{
      questionId: "pw",
      value: SECRET,
    }]);
    const done = await settle({ threads, threadId });
    assert.equal(done.status, "idle");
    assert.ok(JSON.stringify(gateway.requests[1]).includes(SECRET), "the resumed run sends it");
    await sendText({ threads, threadId }, "next", "s2");
    await settle({ threads, threadId });
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
    const answered = await answer(e, question.id, [{ questionId: "token", value: SECRET }], "a");
    assert.equal(answered.view.status, "waiting", "the approval is still pending");
    assert.ok(!JSON.stringify(answered.view).includes(SECRET));
    await decide(e, approval.id, "b");
    await settle(e);
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
    const { tool: slow, gate } = heldTool({ name: "slow", output: "slow done" });
    const e = await engine([
      { toolCalls: [{ name: "slow", arguments: {} }] },
      { text: "final" },
      { text: "queued answer" },
    ], { tools: [slow] });
    const { turnId } = await sendText(e, "first", "s1");
    const queued = await sendText(e, "later", "s2");
    const queueId = queued.view.queue[0].id;
    await assert.rejects(
      editQueued(e, queueId, "edited", "wrong", "e1"),
      isCode("request_conflict"),
    );
    const edited = await editQueued(e, queueId, "edited", "later", "e1");
    assert.equal(edited.view.queue[0].text, "edited");
    await until(e, (v) => v.items.some((i) => i.tool?.name === "slow"));
    const steered = await steer(e, "use metric units", "st");
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
    await sendText(e, "go", "s");
    await until(e, () => e.gateway.requests.length === 1);
    await steer(e, "shorter please", "st");
    const done = await settle(e);
    assert.deepEqual(lastTurn(done), { outcome: "completed", code: undefined });
    assert.equal(done.turns.length, 1);
    assert.deepEqual(userTexts(e.gateway.requests[1].messages), ["go", "shorter please"]);
    await assert.rejects(
      steer(e, "x", "st2"),
      isCode("invalid_input"),
    );
    await e.host.shutdown();
  });

  test("todo_write keeps view.todos (replace-all, bounded); structured results read back decoded", async () => {
    const when = new Date("2026-01-02T03:04:05.000Z");
    const rich = defineTool({
      name: "rich",
      description: "r",
      input: z.object({}),
      execute: () => ({
        output: "see structured",
        structured: { when, nested: { n: 1 } },
      }),
    });
    // JSON would write a Map as `{}`; the stored form keeps it.
    const mapped = defineTool({
      name: "mapped",
      description: "m",
      input: z.object({}),
      execute: () => ({ output: "see structured", structured: { map: new Map([["k", 1]]) } }),
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
          { name: "mapped", arguments: {} },
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
    ], { tools: [rich, mapped], store: keepOpen(store) });
    assert.deepEqual((await e.threads.view(e.threadId)).todos, []);
    const view = await sendWait(e, "plan");
    assert.deepEqual(view.todos, [{ id: "x", text: "only", status: "in_progress" }]);
    const structured = view.items.find((i) => i.tool?.name === "rich")!.tool!.structured;
    assert.deepEqual(structured, { when, nested: { n: 1 } });
    const mappedItem = view.items.find((i) => i.tool?.name === "mapped")!.tool!;
    assert.equal(mappedItem.status, "completed");
    assert.deepEqual(mappedItem.structured, { map: new Map([["k", 1]]) });
    assert.ok(!JSON.stringify(e.gateway.requests[1].messages).includes("2026-01-02"));
    await e.host.shutdown();
    const host = await openHost({ store });
    const threads = host.threads({
      agent: defineAgent({ id: "a", systemPrompt: "s", gateway: scriptedGateway([]) }),
    });
    const reloaded = await threads.view(e.threadId);
    assert.deepEqual(reloaded.todos, view.todos);
    const again = reloaded.items.find((i) => i.tool?.name === "rich")!.tool!.structured;
    assert.deepEqual(again, structured);
    await host.shutdown();
  });
});
