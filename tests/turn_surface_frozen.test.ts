// The frozen turn surface (DESIGN §11 "Frozen surface"): a turn that waits, is
// retried or outlives its host keeps the system prompt, tools and reasoning
// effort it was admitted with, whatever the agentFactory answers later; tool
// handlers still come from the live agent; a recorded tool the live agent lost
// is answered "tool no longer available"; one surface is stored per distinct
// surface, not per turn.
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { type Agent, defineAgent, defineTool, memoryStore, openHost } from "@floret/engine";
import { scriptedGateway, type ScriptStep } from "@floret/engine/testing";
import { libsqlStore } from "@floret/engine/libsql";

const dir = mkdtempSync(join(tmpdir(), "floret-surface-"));
after(() => rmSync(dir, { recursive: true, force: true }));

/** A tool that needs approval; its output says which version of the agent ran it. */
function approveMe(version: string) {
  return defineTool({
    name: "approve_me",
    description: `Needs approval (${version})`,
    input: z.object({}),
    effect: "write",
    permission: "ask",
    execute: () => `ran ${version}`,
  });
}

function lookup(version: string) {
  return defineTool({
    name: "lookup",
    description: `Looks things up (${version})`,
    input: z.object({ q: version === "v1" ? z.string() : z.number() }),
    execute: () => `found ${version}`,
  });
}

/** Agent version one or two, both on the same scripted gateway (so its requests are one list). */
function agents(script: ScriptStep[]) {
  const gateway = scriptedGateway(script);
  const one = () =>
    defineAgent({
      id: "surface",
      systemPrompt: "Version one.",
      gateway,
      reasoning: { effort: "low" },
      tools: [approveMe("v1"), lookup("v1")],
    });
  // Another prompt, lookup gone, a new tool.
  const two = () =>
    defineAgent({
      id: "surface",
      systemPrompt: "Version two.",
      gateway,
      reasoning: { effort: "high" },
      tools: [
        approveMe("v2"),
        defineTool({
          name: "extra",
          description: "Only in two",
          input: z.object({}),
          execute: () => "x",
        }),
      ],
    });
  return { gateway, one, two };
}

function systemOf(request: { messages: readonly unknown[] }): string {
  const first = request.messages[0] as { role: string; text: string };
  assert.equal(first.role, "system");
  return first.text;
}

function toolNames(request: { tools: readonly { name: string }[] }): string[] {
  return request.tools.map((tool) => tool.name).sort();
}

async function surfaceKeys(store: ReturnType<typeof memoryStore>, threadId: string) {
  return (await store.list({ prefix: ["surface", threadId] })).length;
}

describe("frozen turn surface", () => {
  test("a turn resumed after an approval keeps its system prompt and tools", async () => {
    const { gateway, one, two } = agents([
      { toolCalls: [{ name: "approve_me", arguments: {} }] },
      { text: "done" },
    ]);
    let current: () => Agent = one;
    const host = await openHost({ store: memoryStore() });
    const threads = host.threads({ agentFactory: () => current() });
    const { threadId } = await threads.create({ requestKey: "c" });
    await threads.send({ threadId, requestKey: "s", input: { text: "go" } });
    const waiting = await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
    assert.equal(waiting.status, "waiting");
    current = two;
    const interactionId = waiting.pending[0]!.id;
    await threads.respond({ threadId, requestKey: "r", interactionId, decision: "approve" });
    const done = await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
    assert.equal(done.status, "idle");
    assert.equal(gateway.requests.length, 2);
    const [first, resumed] = gateway.requests;
    assert.equal(systemOf(resumed!), "Version one.");
    assert.deepEqual(resumed!.tools, first!.tools);
    assert.deepEqual(toolNames(resumed!), ["approve_me", "ask_user", "lookup", "todo_write"]);
    assert.match(resumed!.tools.find((t) => t.name === "lookup")!.description, /v1/);
    assert.deepEqual(resumed!.reasoning, { effort: "low" });
    // The handler is the live agent's.
    const tool = done.items.find((item) => item.kind === "tool");
    assert.equal(tool?.tool?.output, "ran v2");
    // The next turn is admitted with the agent the factory answers now.
    await threads.send({ threadId, requestKey: "s2", input: { text: "again" } });
    await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
    assert.equal(systemOf(gateway.requests[2]!), "Version two.");
    assert.deepEqual(gateway.requests[2]!.reasoning, { effort: "high" });
    assert.deepEqual(toolNames(gateway.requests[2]!), [
      "approve_me",
      "ask_user",
      "extra",
      "todo_write",
    ]);
    await host.shutdown();
  });

  test("a turn resumed after a question keeps its surface", async () => {
    const { gateway, one, two } = agents([
      {
        toolCalls: [{
          name: "ask_user",
          arguments: { questions: [{ id: "name", prompt: "Your name?" }] },
        }],
      },
      { text: "thanks" },
    ]);
    let current: () => Agent = one;
    const host = await openHost({ store: memoryStore() });
    const threads = host.threads({ agentFactory: () => current() });
    const { threadId } = await threads.create({ requestKey: "c" });
    await threads.send({ threadId, requestKey: "s", input: { text: "ask me" } });
    const waiting = await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
    assert.equal(waiting.pending[0]?.kind, "input");
    current = two;
    await threads.respond({
      threadId,
      requestKey: "r",
      interactionId: waiting.pending[0]!.id,
      answers: [{ questionId: "name", value: "Al" }],
    });
    const done = await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
    assert.equal(done.turns.at(-1)?.outcome, "completed");
    assert.equal(systemOf(gateway.requests[1]!), "Version one.");
    assert.deepEqual(gateway.requests[1]!.tools, gateway.requests[0]!.tools);
    await host.shutdown();
  });

  test("after a restart with another agent, the waiting turn keeps its surface; a lost tool is an ordinary error", async () => {
    const url = `file:${join(dir, "restart.db")}`;
    const { gateway, one, two } = agents([
      { toolCalls: [{ name: "approve_me", arguments: {} }] },
      {
        toolCalls: [{ name: "lookup", arguments: { q: "a" } }, { name: "extra", arguments: {} }],
      },
      { text: "done" },
    ]);
    const before = await openHost({ store: libsqlStore({ url }) });
    const first = before.threads({ agentFactory: () => one() });
    const { threadId } = await first.create({ requestKey: "c" });
    await first.send({ threadId, requestKey: "s", input: { text: "go" } });
    const waiting = await first.waitForIdle(threadId, { timeoutMs: 10_000 });
    assert.equal(waiting.status, "waiting");
    await before.shutdown();

    const later = await openHost({ store: libsqlStore({ url }) });
    const threads = later.threads({ agentFactory: () => two() });
    const interactionId = waiting.pending[0]!.id;
    await threads.respond({ threadId, requestKey: "r", interactionId, decision: "approve" });
    const done = await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
    assert.equal(done.status, "idle");
    assert.equal(done.turns.at(-1)?.outcome, "completed");
    assert.equal(gateway.requests.length, 3);
    for (const request of gateway.requests.slice(1)) {
      assert.equal(systemOf(request), "Version one.");
      assert.deepEqual(request.tools, gateway.requests[0]!.tools);
    }
    const lost = done.items.find((item) => item.kind === "tool" && item.tool?.name === "lookup");
    assert.match(lost?.tool?.output ?? "", /tool no longer available/);
    assert.equal(lost?.tool?.status, "error");
    // A tool the turn was never offered is not run, even though the live agent has it.
    const unoffered = done.items.find((item) =>
      item.kind === "tool" && item.tool?.name === "extra"
    );
    assert.match(unoffered?.tool?.output ?? "", /Unknown tool "extra"/);
    assert.equal(unoffered?.tool?.status, "error");
    // The model read it as the call's result.
    const told = JSON.stringify(gateway.requests[2]!.messages);
    assert.match(told, /tool no longer available/);
    await later.shutdown();
  });

  test("a journal written before surfaces were recorded resumes with the live agent", async () => {
    const url = `file:${join(dir, "old.db")}`;
    const { gateway, one, two } = agents([
      { toolCalls: [{ name: "approve_me", arguments: {} }] },
      { text: "done" },
    ]);
    const before = await openHost({ store: libsqlStore({ url }) });
    const first = before.threads({ agentFactory: () => one() });
    const { threadId } = await first.create({ requestKey: "c" });
    await first.send({ threadId, requestKey: "s", input: { text: "go" } });
    const waiting = await first.waitForIdle(threadId, { timeoutMs: 10_000 });
    await before.shutdown();
    // What an older release left: no surface key, no fingerprint on the record.
    const raw = libsqlStore({ url });
    const [entry] = await raw.getMany([["thread", threadId]]);
    const record = JSON.parse(new TextDecoder().decode(entry!.value));
    assert.equal(typeof record.surface, "string");
    delete record.surface;
    const stored = await raw.list({ prefix: ["surface", threadId] });
    assert.equal(stored.length, 1);
    await raw.commit({
      set: [{ key: ["thread", threadId], value: new TextEncoder().encode(JSON.stringify(record)) }],
      delete: stored.map((kv) => kv.key),
    });
    await raw.close();

    const later = await openHost({ store: libsqlStore({ url }) });
    const threads = later.threads({ agentFactory: () => two() });
    const interactionId = waiting.pending[0]!.id;
    await threads.respond({ threadId, requestKey: "r", interactionId, decision: "approve" });
    const done = await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
    assert.equal(done.turns.at(-1)?.outcome, "completed");
    assert.equal(systemOf(gateway.requests[1]!), "Version two.");
    assert.deepEqual(toolNames(gateway.requests[1]!), [
      "approve_me",
      "ask_user",
      "extra",
      "todo_write",
    ]);
    await later.shutdown();
  });

  test("a retry of a failed turn uses the surface it was admitted with", async () => {
    const { gateway, one, two } = agents([
      { error: { retry: "never", status: 400, message: "bad" } },
      { text: "done" },
    ]);
    let current: () => Agent = one;
    const host = await openHost({ store: memoryStore() });
    const threads = host.threads({ agentFactory: () => current() });
    const { threadId } = await threads.create({ requestKey: "c" });
    await threads.send({ threadId, requestKey: "s", input: { text: "go" } });
    const failed = await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
    assert.equal(failed.turns.at(-1)?.outcome, "failed");
    current = two;
    await threads.retry({ threadId, requestKey: "r" });
    const done = await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
    assert.equal(done.turns.at(-1)?.outcome, "completed");
    assert.equal(systemOf(gateway.requests.at(-1)!), "Version one.");
    assert.deepEqual(gateway.requests.at(-1)!.tools, gateway.requests[0]!.tools);
    await host.shutdown();
  });

  test("a fork keeps its last turn's surface: a retry there uses it", async () => {
    const { gateway, one, two } = agents([
      { error: { retry: "never", status: 400, message: "bad" } },
      { text: "done" },
    ]);
    let current: () => Agent = one;
    const store = memoryStore();
    const host = await openHost({ store });
    const threads = host.threads({ agentFactory: () => current() });
    const { threadId } = await threads.create({ requestKey: "c" });
    await threads.send({ threadId, requestKey: "s", input: { text: "go" } });
    const failed = await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
    assert.equal(failed.turns.at(-1)?.outcome, "failed");
    const forked = await threads.fork({ threadId, requestKey: "f" });
    assert.equal(await surfaceKeys(store, forked.threadId), 1);
    current = two;
    await threads.retry({ threadId: forked.threadId, requestKey: "r" });
    const done = await threads.waitForIdle(forked.threadId, { timeoutMs: 10_000 });
    assert.equal(done.turns.at(-1)?.outcome, "completed");
    assert.equal(systemOf(gateway.requests.at(-1)!), "Version one.");
    await host.shutdown();
  });

  test("one stored surface for many turns of the same agent; a new one when it changes", async () => {
    const { one, two } = agents(Array.from({ length: 8 }, () => ({ text: "ok" })));
    let current: () => Agent = one;
    const store = memoryStore();
    const host = await openHost({ store });
    // A new agent object per turn, with the same definitions: the same surface.
    const threads = host.threads({ agentFactory: () => current() });
    const { threadId } = await threads.create({ requestKey: "c" });
    for (let i = 0; i < 5; i++) {
      await threads.send({ threadId, requestKey: `s${i}`, input: { text: `t${i}` } });
      await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
    }
    assert.equal(await surfaceKeys(store, threadId), 1);
    current = two;
    for (let i = 5; i < 7; i++) {
      await threads.send({ threadId, requestKey: `s${i}`, input: { text: `t${i}` } });
      await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
    }
    assert.equal(await surfaceKeys(store, threadId), 2);
    // Deleting the thread takes its surfaces with it.
    await threads.delete({ threadId, requestKey: "d" });
    assert.equal(await surfaceKeys(store, threadId), 0);
    await host.shutdown();
  });
});
