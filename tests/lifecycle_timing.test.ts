// Turn timing, final answers and tool activity (issue 15): derived from the
// journal, so they read the same after a restart and in a fork.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import {
  ACTIVITY_LIMITS,
  defineAgent,
  defineTool,
  type KvStore,
  memoryStore,
  type ObservationEvent,
  openHost,
  type ThreadView,
} from "@floret/engine";
import { scriptedGateway } from "@floret/engine/testing";
import { addTool, deferred, engine, sendAndWait, until } from "./support/engine.ts";
import { writeTool } from "./support/interactions.ts";

function sharedStore(): KvStore {
  const store = memoryStore();
  return { ...store, close: async () => {} };
}

/** What must read the same after a reload. */
function durableFacts(view: ThreadView) {
  return {
    turns: view.turns,
    items: view.items.map((item) => ({ id: item.id, tool: item.tool })),
  };
}

describe("turn timing and final answers", () => {
  test("a completed turn: elapsed = waiting + work, final items in order, tool start and end", async () => {
    const e = await engine([
      { toolCalls: [{ name: "add", arguments: { a: 1, b: 2 } }], text: "Let me add." },
      { text: "It is 3." },
    ]);
    const view = await sendAndWait(e, "1+2?");
    const [turn] = view.turns;
    assert.equal(turn.outcome, "completed");
    assert.equal(typeof turn.elapsedMs, "number");
    assert.equal(turn.waitingMs, 0, "no approvals or questions were waited for");
    assert.equal(turn.workMs, turn.elapsedMs);
    assert.equal(turn.elapsedMs, Date.parse(turn.endedAt!) - Date.parse(turn.startedAt));
    const assistants = view.items.filter((item) => item.kind === "assistant");
    assert.deepEqual(assistants.map((item) => item.text), ["Let me add.", "It is 3."]);
    // Text before a tool call is not part of the final answer.
    assert.deepEqual(turn.finalItemIds, [assistants[1].id]);
    const tool = view.items.find((item) => item.kind === "tool")!.tool!;
    assert.ok(tool.startedAt && tool.endedAt);
    assert.ok(Date.parse(tool.startedAt) >= Date.parse(turn.startedAt));
    assert.ok(Date.parse(tool.endedAt) >= Date.parse(tool.startedAt));
    assert.ok(Date.parse(tool.endedAt) <= Date.parse(turn.endedAt!));
    await e.host.shutdown();
  });

  test("a turn that waits for an approval: waitingMs covers the wait, workMs excludes it", async () => {
    const ran: string[] = [];
    const store = sharedStore();
    const e = await engine([
      { toolCalls: [{ name: "write", arguments: { line: "x" } }] },
      { text: "Written." },
    ], { tools: [writeTool(ran)], store });
    const waiting = await sendAndWait(e, "write x");
    assert.equal(waiting.status, "waiting");
    assert.equal(waiting.turns[0].waitingMs, undefined, "a turn under way has no timing yet");
    // The person takes a while: the approval stays open across this pause.
    await new Promise((resolve) => setTimeout(resolve, 30));
    await e.threads.respond({
      threadId: e.threadId,
      requestKey: "approve",
      interactionId: waiting.pending[0].id,
      decision: "approve",
    });
    const view = await e.threads.waitForIdle(e.threadId, { timeoutMs: 10_000 });
    const [turn] = view.turns;
    assert.equal(turn.outcome, "completed");
    assert.deepEqual(ran, ["x"]);
    assert.ok(turn.waitingMs! > 0, `waitingMs ${turn.waitingMs}`);
    assert.equal(turn.workMs! + turn.waitingMs!, turn.elapsedMs);
    assert.ok(turn.workMs! < turn.elapsedMs!, "the wait is not counted as work");
    // Derived from the journal: the same after a reload.
    await e.host.shutdown();
    const host = await openHost({ store });
    const threads = host.threads({
      agent: defineAgent({ id: "a", systemPrompt: "s", gateway: scriptedGateway([]) }),
    });
    assert.deepEqual((await threads.view(e.threadId)).turns, view.turns);
    await host.shutdown();
  });

  test("an answer continued after a length stop is one final answer of several items", async () => {
    const gateway = scriptedGateway([]);
    // A gateway that stops at the length limit once, then finishes.
    let call = 0;
    const lengthy = {
      info: gateway.info,
      async *stream() {
        call++;
        yield { type: "text" as const, delta: call === 1 ? "Part one, " : "part two." };
        yield { type: "finish" as const, reason: call === 1 ? "length" as const : "stop" as const };
      },
    };
    const host = await openHost({ store: memoryStore() });
    const threads = host.threads({
      agent: defineAgent({ id: "a", systemPrompt: "x", gateway: lengthy }),
    });
    const { threadId } = await threads.create({ requestKey: "c" });
    await threads.send({ threadId, requestKey: "s", input: { text: "Write" } });
    const view = await threads.waitForIdle(threadId, { timeoutMs: 5_000 });
    const assistants = view.items.filter((item) => item.kind === "assistant");
    assert.equal(assistants.length, 2);
    assert.deepEqual(view.turns[0].finalItemIds, assistants.map((item) => item.id));
    await host.shutdown();
  });

  test("turns that did not complete have no final answer; a running turn has no elapsed time yet", async () => {
    const e = await engine([{ text: "streamed so far", delayMs: 10 }, { hang: true }]);
    await sendAndWait(e, "first");
    await e.threads.send({ threadId: e.threadId, requestKey: "s2", input: { text: "second" } });
    const running = await e.threads.view(e.threadId);
    assert.equal(running.turns[1].elapsedMs, undefined);
    assert.deepEqual(running.turns[1].finalItemIds, []);
    const cancelled = await e.threads.cancel({ threadId: e.threadId, requestKey: "x" });
    const turn = cancelled.view.turns[1];
    assert.equal(turn.outcome, "cancelled");
    assert.deepEqual(turn.finalItemIds, []);
    assert.equal(typeof turn.elapsedMs, "number");
    assert.equal(cancelled.view.turns[0].finalItemIds.length, 1);
    await e.host.shutdown();
  });

  test("timing, final answers and tool times are identical after a restart and in a fork", async () => {
    const store = sharedStore();
    const e = await engine([
      { toolCalls: [{ name: "add", arguments: { a: 2, b: 2 } }] },
      { text: "Four." },
    ], { store });
    const before = await sendAndWait(e, "2+2?");
    await e.host.shutdown();
    const host = await openHost({ store });
    const threads = host.threads({
      agent: defineAgent({
        id: "test-agent",
        systemPrompt: "x",
        gateway: scriptedGateway([]),
        tools: [addTool()],
      }),
    });
    const after = await threads.view(e.threadId);
    assert.deepEqual(durableFacts(after), durableFacts(before));
    const fork = await threads.fork({ threadId: e.threadId, requestKey: "f" });
    assert.deepEqual(fork.view.turns, before.turns);
    assert.deepEqual(
      fork.view.items.map((item) => item.tool),
      before.items.map((item) => item.tool),
    );
    await host.shutdown();
  });
});

describe("tool activity", () => {
  const activityTool = (activity: unknown) =>
    defineTool({
      name: "inspect",
      description: "Looks at something",
      input: z.object({ path: z.string() }),
      execute: ({ path }) => ({ output: `looked at ${path}`, activity } as never),
    });

  test("activity is kept on the tool item, live and across reloads, and never reaches the model", async () => {
    const store = sharedStore();
    const activity = {
      label: "Inspected src/mod.ts",
      rows: [
        { kind: "text", text: "3 exports" },
        { kind: "markdown", text: "**ok**" },
        { kind: "code", text: "export * from './x';", language: "ts" },
      ],
    };
    const e = await engine([
      { toolCalls: [{ name: "inspect", arguments: { path: "src/mod.ts" } }] },
      { text: "Done." },
    ], { store, tools: [activityTool(activity)] });
    const live = await sendAndWait(e, "look");
    const tool = live.items.find((item) => item.kind === "tool")!.tool!;
    assert.deepEqual(tool.activity, activity);
    assert.equal(tool.output, "looked at src/mod.ts");
    assert.ok(!JSON.stringify(e.gateway.requests).includes("3 exports"));
    await e.host.shutdown();
    const host = await openHost({ store });
    const threads = host.threads({
      agent: defineAgent({
        id: "test-agent",
        systemPrompt: "x",
        gateway: scriptedGateway([]),
        tools: [activityTool(activity)],
      }),
    });
    const reloaded = await threads.view(e.threadId);
    assert.deepEqual(reloaded.items.find((item) => item.kind === "tool")?.tool?.activity, activity);
    await host.shutdown();
  });

  test("activity is bounded: long texts are cut and marked, extra rows dropped and counted", async () => {
    const rows = Array.from({ length: ACTIVITY_LIMITS.rows + 5 }, (_, i) => ({
      kind: "text",
      text: i === 0 ? "x".repeat(ACTIVITY_LIMITS.text + 10) : `row ${i}`,
    }));
    const e = await engine([
      { toolCalls: [{ name: "inspect", arguments: { path: "p" } }] },
      { text: "Done." },
    ], { tools: [activityTool({ label: "L".repeat(500), rows })] });
    const view = await sendAndWait(e, "look");
    const activity = view.items.find((item) => item.kind === "tool")!.tool!.activity!;
    assert.equal(activity.label?.length, ACTIVITY_LIMITS.label);
    assert.equal(activity.rows?.length, ACTIVITY_LIMITS.rows);
    assert.equal(activity.rows?.[0].text.length, ACTIVITY_LIMITS.text);
    assert.equal(activity.rows?.[0].truncated, true);
    assert.equal(activity.rows?.[1].truncated, undefined);
    assert.equal(activity.omittedRows, 5);
    await e.host.shutdown();
  });

  test("activity of the wrong shape is dropped and observed; the result itself stands", async () => {
    const events: ObservationEvent[] = [];
    const gateway = scriptedGateway([
      { toolCalls: [{ name: "inspect", arguments: { path: "p" } }] },
      { text: "Done." },
    ]);
    const host = await openHost({ store: memoryStore(), onEvent: (event) => events.push(event) });
    const threads = host.threads({
      agent: defineAgent({
        id: "a",
        systemPrompt: "x",
        gateway,
        tools: [activityTool({ rows: [{ kind: "html", text: "<b>" }] })],
      }),
    });
    const { threadId } = await threads.create({ requestKey: "c" });
    await threads.send({ threadId, requestKey: "s", input: { text: "look" } });
    const view = await threads.waitForIdle(threadId, { timeoutMs: 5_000 });
    const tool = view.items.find((item) => item.kind === "tool")!.tool!;
    assert.equal(tool.status, "completed");
    assert.equal(tool.activity, undefined);
    const rejected = events.find((event) => event.type === "tool.activity_rejected");
    assert.match(String(rejected?.problem), /kind/);
    await host.shutdown();
  });

  test("the tool item shows the running call with its start before the result", async () => {
    const gate = deferred();
    const slow = defineTool({
      name: "slow",
      description: "Waits",
      input: z.object({}),
      execute: async () => {
        await gate.promise;
        return "done";
      },
    });
    const e = await engine([{ toolCalls: [{ name: "slow", arguments: {} }] }, { text: "ok" }], {
      tools: [slow],
    });
    await e.threads.send({ threadId: e.threadId, requestKey: "s", input: { text: "go" } });
    const running = await until(e, (view) => view.items.some((item) => item.kind === "tool"));
    const tool = running.items.find((item) => item.kind === "tool")!.tool!;
    assert.equal(tool.status, "running");
    assert.ok(tool.startedAt);
    assert.equal(tool.endedAt, undefined);
    gate.resolve();
    await e.threads.waitForIdle(e.threadId, { timeoutMs: 5_000 });
    await e.host.shutdown();
  });
});
