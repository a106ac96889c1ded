/**
 * Thread goals (DESIGN §11 "Long-work precise points"): the model's `goal`
 * tool, reflection before a natural end, the host's goal commands, restarts
 * and forks — through the public API.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  defineAgent,
  FloretError,
  type LocalThreadService,
  memoryStore,
  openHost,
  type ProviderRequest,
} from "@floret/engine";
import { scriptedGateway, type ScriptStep } from "@floret/engine/testing";
import { engine, sendAndWait, type TestEngine } from "./support/engine.ts";
import { contextGateway, textOf, words } from "./support/context_gateway.ts";
import { CONTEXT_SYSTEM } from "./support/context_host.ts";

const local = (e: TestEngine): LocalThreadService => e.threads as LocalThreadService;

const goalCall = (args: Record<string, unknown>, callId?: string): ScriptStep => ({
  toolCalls: [{ name: "goal", arguments: args, ...(callId ? { callId } : {}) }],
});

function allText(request: ProviderRequest): string {
  return request.messages.map((m) => ("text" in m ? m.text : "")).join("\n");
}

test("goals: true gives the model a goal tool; set, review and complete show on view.goal", async () => {
  const e = await engine([
    goalCall({ action: "set", text: "Ship the report" }),
    goalCall({ action: "review", evidence: "The report is written and checked" }),
    goalCall({ action: "complete" }),
    { text: "Done." },
  ], { agent: { goals: true } });
  try {
    const view = await sendAndWait(e, "Please ship the report");
    assert.equal(view.turns.at(-1)?.outcome, "completed");
    assert.equal(view.goal?.text, "Ship the report");
    assert.equal(view.goal?.status, "completed");
    assert.equal(view.goal?.version, 1, "a review does not change the version");
    assert.equal(view.goal?.review?.evidence, "The report is written and checked");
    assert.ok(e.gateway.requests[0].tools.some((tool) => tool.name === "goal"));
    // The second request sees the goal that the first call set.
    assert.match(allText(e.gateway.requests[1]), /Ship the report/);
  } finally {
    await e.host.shutdown();
  }
});

test("an agent without goals has no goal tool", async () => {
  const e = await engine([{ text: "hi" }]);
  try {
    await sendAndWait(e, "hello");
    assert.ok(!e.gateway.requests[0].tools.some((tool) => tool.name === "goal"));
  } finally {
    await e.host.shutdown();
  }
});

test("complete needs a review in the same turn; set bumps the version and drops the review", async () => {
  const e = await engine([
    goalCall({ action: "complete" }),
    goalCall({ action: "review", evidence: "half done" }),
    goalCall({ action: "set", text: "A sharper objective" }),
    goalCall({ action: "review", evidence: "all done" }),
    { text: "ok" },
  ], { agent: { goals: true } });
  try {
    await local(e).setGoal({ threadId: e.threadId, requestKey: "g1", text: "First objective" });
    const view = await sendAndWait(e, "work");
    const tools = view.items.filter((item) => item.kind === "tool");
    assert.equal(tools[0].tool?.status, "error", "complete without a review is refused");
    assert.match(tools[0].tool?.output ?? "", /review/);
    assert.equal(view.goal?.version, 2);
    assert.equal(view.goal?.text, "A sharper objective");
    assert.equal(view.goal?.status, "active");
    assert.equal(view.goal?.review?.evidence, "all done");
  } finally {
    await e.host.shutdown();
  }
});

test("a natural end with an active unreviewed goal asks the model again, at most 3 times", async () => {
  const e = await engine([
    { text: "first stop" },
    { text: "second stop" },
    { text: "third stop" },
    { text: "fourth stop" },
    { text: "never used" },
  ], { agent: { goals: true } });
  try {
    await local(e).setGoal({ threadId: e.threadId, requestKey: "g", text: "Keep going" });
    const view = await sendAndWait(e, "go");
    assert.equal(view.turns.at(-1)?.outcome, "completed");
    assert.equal(e.gateway.requests.length, 4, "one request and three reflections");
    assert.match(allText(e.gateway.requests[1]), /Runtime note/);
    assert.equal(e.gateway.remaining, 1);
    // Runtime notes are context, never user items.
    assert.equal(view.items.filter((item) => item.kind === "user").length, 1);
  } finally {
    await e.host.shutdown();
  }
});

test("a review ends reflection: the turn ends after the model reviewed", async () => {
  const e = await engine([
    { text: "I think I'm done" },
    goalCall({ action: "review", evidence: "tests pass" }),
    { text: "Reviewed." },
    { text: "unused" },
  ], { agent: { goals: true } });
  try {
    await local(e).setGoal({ threadId: e.threadId, requestKey: "g", text: "Make tests pass" });
    const view = await sendAndWait(e, "go");
    assert.equal(e.gateway.requests.length, 3);
    assert.equal(view.goal?.review?.evidence, "tests pass");
    assert.equal(e.gateway.remaining, 1);
  } finally {
    await e.host.shutdown();
  }
});

test("setGoal and deleteGoal never start work; the next request sees the change", async () => {
  const e = await engine([{ text: "a" }, { text: "b" }]);
  try {
    const set = await local(e).setGoal({
      threadId: e.threadId,
      requestKey: "s",
      text: "  Learn Go  ",
    });
    assert.equal(set.view.status, "idle");
    assert.deepEqual(set.view.goal, { text: "Learn Go", status: "active", version: 1 });
    assert.equal(e.gateway.requests.length, 0);
    // Replays answer from the key; another input under the same key conflicts.
    const again = await local(e).setGoal({
      threadId: e.threadId,
      requestKey: "s",
      text: "  Learn Go  ",
    });
    assert.equal(again.view.goal?.version, 1);
    await assert.rejects(
      local(e).setGoal({ threadId: e.threadId, requestKey: "s", text: "other" }),
      (error: unknown) => error instanceof FloretError && error.code === "request_conflict",
    );
    await sendAndWait(e, "hello");
    assert.match(allText(e.gateway.requests[0]), /Learn Go/);
    const deleted = await local(e).deleteGoal({ threadId: e.threadId, requestKey: "d" });
    assert.equal(deleted.view.goal, undefined);
    await sendAndWait(e, "again");
    assert.doesNotMatch(allText(e.gateway.requests[1]), /Learn Go/);
  } finally {
    await e.host.shutdown();
  }
});

test("goal commands refuse bad input and unknown threads, changing nothing", async () => {
  const e = await engine([]);
  try {
    for (const text of ["", "   "]) {
      await assert.rejects(
        local(e).setGoal({ threadId: e.threadId, requestKey: `k${text}`, text }),
        (error: unknown) => error instanceof FloretError && error.code === "invalid_input",
      );
    }
    await assert.rejects(
      local(e).setGoal({ threadId: e.threadId, requestKey: "x", text: "t", extra: 1 } as never),
      (error: unknown) => error instanceof FloretError && error.code === "invalid_input",
    );
    await assert.rejects(
      local(e).setGoal({ threadId: "thread_nope", requestKey: "y", text: "t" }),
      (error: unknown) => error instanceof FloretError && error.code === "thread_not_found",
    );
    assert.equal((await e.threads.view(e.threadId)).goal, undefined);
  } finally {
    await e.host.shutdown();
  }
});

test("submitGoal on an idle thread sets the goal and admits its text as a user turn", async () => {
  const e = await engine([{ text: "on it" }]);
  try {
    const { view, turnId } = await local(e).submitGoal({
      threadId: e.threadId,
      requestKey: "sub",
      text: "Write the summary",
    });
    assert.ok(turnId);
    assert.equal(view.goal?.text, "Write the summary");
    const done = await e.threads.waitForIdle(e.threadId, { timeoutMs: 10_000 });
    const user = done.items.find((item) => item.kind === "user");
    assert.equal(user?.text, "Write the summary");
    const replay = await local(e).submitGoal({
      threadId: e.threadId,
      requestKey: "sub",
      text: "Write the summary",
    });
    assert.equal(replay.turnId, turnId);
    assert.equal(done.turns.length, 1);
  } finally {
    await e.host.shutdown();
  }
});

test("submitGoal on a busy thread only sets the goal: nothing is queued", async () => {
  const e = await engine([{ hang: true }]);
  try {
    await e.threads.send({ threadId: e.threadId, requestKey: "s", input: { text: "long job" } });
    const { view, turnId } = await local(e).submitGoal({
      threadId: e.threadId,
      requestKey: "sub",
      text: "New goal",
    });
    assert.equal(turnId, undefined);
    assert.equal(view.goal?.text, "New goal");
    assert.equal(view.queue.length, 0);
    await e.threads.cancel({ threadId: e.threadId, requestKey: "c" });
  } finally {
    await e.host.shutdown();
  }
});

test("goals survive a restart and a fork", async () => {
  // One memory store for both hosts: the first host's shutdown must not close it.
  const inner = memoryStore();
  const store = { ...inner, close: () => Promise.resolve() };
  const gateway = scriptedGateway([{ text: "ok" }]);
  const agent = defineAgent({ id: "a", systemPrompt: "s", gateway, goals: true });
  const first = await openHost({ store });
  const threads = first.threads({ agent });
  const { threadId } = await threads.create({ requestKey: "c" });
  await threads.setGoal({ threadId, requestKey: "g", text: "Persist me" });
  await first.shutdown();
  const second = await openHost({ store });
  try {
    const again = second.threads({ agent });
    const view = await again.view(threadId);
    assert.deepEqual(view.goal, { text: "Persist me", status: "active", version: 1 });
    const fork = await again.fork({ threadId, requestKey: "f" });
    assert.deepEqual(fork.view.goal, view.goal);
  } finally {
    await second.shutdown();
  }
});

test("defineAgent refuses a host tool named goal when goals are on", async () => {
  const { defineTool } = await import("@floret/engine");
  const { z } = await import("zod");
  const tool = defineTool({
    name: "goal",
    description: "x",
    input: z.object({}),
    execute: () => "",
  });
  assert.throws(
    () =>
      defineAgent({
        id: "a",
        systemPrompt: "s",
        gateway: scriptedGateway([]),
        tools: [tool],
        goals: true,
      }),
    (error: unknown) => error instanceof FloretError && error.code === "invalid_input",
  );
});

test("over HTTP: PUT/DELETE /goal and submit through threadClient; compact continueGoal in process", async () => {
  const { overHttp } = await import("./support/over_http.ts");
  const e = await engine([{ text: "working on it" }], { agent: { goals: true } });
  try {
    const remote = overHttp(e.threads);
    const set = await remote.setGoal({
      threadId: e.threadId,
      requestKey: "h1",
      text: "Over the wire",
    });
    assert.deepEqual(set.view.goal, { text: "Over the wire", status: "active", version: 1 });
    const deleted = await remote.deleteGoal({ threadId: e.threadId, requestKey: "h2" });
    assert.equal(deleted.view.goal, undefined);
    const submitted = await remote.submitGoal({
      threadId: e.threadId,
      requestKey: "h3",
      text: "Submitted goal",
    });
    assert.ok(submitted.turnId);
    assert.equal(submitted.view.goal?.version, 1);
    await assert.rejects(
      remote.setGoal({ threadId: e.threadId, requestKey: "h4", text: "" }),
      (error: unknown) => error instanceof FloretError && error.code === "invalid_input",
    );
  } finally {
    await e.host.shutdown();
  }
});

test("compact({ continueGoal: true }) keeps working on the active goal in the same turn", async () => {
  const e = await engine([
    { text: "first answer" },
    goalCall({ action: "review", evidence: "all checked" }),
    { text: "continued work" },
  ], { agent: { goals: true, context: { windowTokens: 100_000 } } });
  try {
    await sendAndWait(e, "start");
    await local(e).setGoal({ threadId: e.threadId, requestKey: "g", text: "Finish the audit" });
    const before = (await e.threads.view(e.threadId)).turns.length;
    // Below the target there is nothing to compact: the goal's work still goes on.
    const result = await local(e).compact({
      threadId: e.threadId,
      requestKey: "c",
      continueGoal: true,
    });
    assert.equal(result.outcome, "noop");
    const view = await e.threads.waitForIdle(e.threadId, { timeoutMs: 10_000 });
    assert.equal(view.turns.length, before + 1);
    assert.deepEqual(view.turns.at(-1)?.failure, undefined);
    assert.equal(view.turns.at(-1)?.outcome, "completed");
    assert.equal(view.goal?.review?.evidence, "all checked");
    assert.match(allText(e.gateway.requests.at(-2)!), /Continue working on the active thread goal/);
    // Without an active goal, continueGoal is a plain compaction.
    await local(e).deleteGoal({ threadId: e.threadId, requestKey: "d" });
    const plain = await local(e).compact({
      threadId: e.threadId,
      requestKey: "c2",
      continueGoal: true,
    });
    assert.equal(plain.outcome, "noop");
    assert.equal((await e.threads.view(e.threadId)).turns.length, before + 1);
  } finally {
    await e.host.shutdown();
  }
});

test("compact({ continueGoal: true }) on a full thread compacts, then the same turn works on the goal from the summary", async () => {
  const gateway = contextGateway(CONTEXT_SYSTEM);
  const host = await openHost({ store: memoryStore() });
  const threads = host.threads({
    agent: defineAgent({
      id: "ctx",
      systemPrompt: CONTEXT_SYSTEM,
      gateway,
      tools: [],
      askUser: false,
      todos: false,
      goals: true,
      context: { windowTokens: 8000 },
    }),
  }) as LocalThreadService;
  try {
    const { threadId } = await threads.create({ requestKey: "create" });
    const say = async (key: string, text: string) => {
      await threads.send({ threadId, requestKey: key, input: { text } });
      return await threads.waitForIdle(threadId, { timeoutMs: 20_000 });
    };
    // Answers long enough that the thread sits above the compaction target.
    gateway.answers.push({ text: words(3000, "long") }, { text: words(1950, "more") });
    await say("s1", "HEAD-MARKER first question");
    await say("s2", "write a lot");
    await threads.setGoal({ threadId, requestKey: "g", text: "Finish the audit" });
    const before = (await threads.view(threadId)).turns.length;
    const asked = gateway.requests.length;
    gateway.answers.push(
      { toolCalls: [{ name: "goal", arguments: { action: "review", evidence: "all checked" } }] },
      { text: "continued work" },
    );
    const result = await threads.compact({ threadId, requestKey: "c", continueGoal: true });
    assert.equal(result.outcome, "compacted");
    const view = await threads.waitForIdle(threadId, { timeoutMs: 20_000 });
    assert.equal(gateway.summaries.length, 1, "one summary request");
    assert.equal(view.turns.length, before + 1, "one turn: the compaction, then the goal's work");
    assert.equal(view.turns.at(-1)?.outcome, "completed");
    assert.equal(view.goal?.review?.evidence, "all checked");
    assert.equal(view.items.at(-1)?.text, "continued work");
    // The goal's work reads the summary, not the head it replaced, and the continuation note.
    const next = textOf(gateway.requests[asked]);
    assert.match(next, /SUMMARY-1/);
    assert.doesNotMatch(next, /HEAD-MARKER/);
    assert.match(next, /Continue working on the active thread goal/);
    const figures = await threads.context(threadId);
    assert.deepEqual(figures.compactions.map((c) => c.status), ["compacted"]);
  } finally {
    await host.shutdown();
  }
});
