// Sub-agents (DESIGN.md §10 "Sub-agents" and "Sub-agent precise points"):
// child threads started by the built-in tools, their reports and limits,
// listing, cancel and delete reaching descendants (exactly-once spawns: subagents_once.test.ts).
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { defineAgent, FloretError } from "@floret/engine";
import { scriptedGateway } from "@floret/engine/testing";
import {
  childAgent,
  family,
  nestingAgent,
  rawOutputs,
  settleAll,
  toolItems,
  toolOutputs,
  waitForSpawned,
} from "./support/subagents.ts";

const spawn = (agent: string, task: string, title?: string) => ({
  name: "spawn_agent",
  arguments: title === undefined ? { agent, task } : { agent, task, title },
});

describe("spawn_agent and wait_agents", () => {
  test("a parent starts two children, waits for both and answers from their reports", async () => {
    let finalRequest: unknown;
    const f = await family([
      { toolCalls: [spawn("alpha", "find A", "A research"), spawn("beta", "find B")] },
      waitForSpawned,
      (request) => {
        finalRequest = request;
        const [waited] = toolOutputs(request, "wait_agents") as { agents: unknown[] }[];
        return { text: `Summary of ${waited.agents.length} reports` };
      },
    ], [childAgent("alpha"), childAgent("beta")]);
    await f.threads.send({ threadId: f.threadId, requestKey: "s1", input: { text: "research" } });
    const view = await f.threads.waitForIdle(f.threadId, { timeoutMs: 10_000 });
    assert.equal(view.items.at(-1)?.text, "Summary of 2 reports");
    assert.ok(finalRequest);

    const spawned = toolItems(view, "spawn_agent").map((t) => JSON.parse(t.output!).threadId);
    assert.equal(spawned.length, 2);
    const waited = JSON.parse(toolItems(view, "wait_agents")[0].output!);
    assert.deepEqual(waited, {
      agents: [
        { threadId: spawned[0], status: "completed", report: "alpha report on: find A" },
        { threadId: spawned[1], status: "completed", report: "beta report on: find B" },
      ],
    });

    // Children are ordinary threads with a parent; list() shows roots only.
    const child = await f.threads.view(spawned[0]);
    assert.equal(child.parentThreadId, f.threadId);
    assert.equal(child.title, "A research");
    assert.deepEqual(child.items.map((i) => [i.kind, i.text]), [
      ["user", "find A"],
      ["assistant", "alpha report on: find A"],
    ]);
    const roots = await f.threads.list();
    assert.deepEqual(roots.threads.map((t) => t.threadId), [f.threadId]);
    const children = await f.threads.list({ parentThreadId: f.threadId });
    assert.deepEqual(children.threads.map((t) => t.threadId).sort(), [...spawned].sort());
    assert.ok(children.threads.every((t) => t.parentThreadId === f.threadId));
    await f.host.shutdown();
  });

  test("a child runs the subagent named at spawn, with report_to_parent and without the parent tools", async () => {
    const gateway = scriptedGateway([{ text: "done" }]);
    const worker = defineAgent({ id: "worker", systemPrompt: "You work.", gateway });
    const f = await family(
      [{ toolCalls: [spawn("worker", "do it")] }, waitForSpawned, { text: "ok" }],
      [worker],
    );
    await f.threads.send({ threadId: f.threadId, requestKey: "s1", input: { text: "go" } });
    await settleAll(f);
    const [request] = gateway.requests;
    assert.deepEqual(request.messages[0], { role: "system", text: "You work." });
    const names = request.tools.map((t) => t.name);
    assert.ok(names.includes("report_to_parent"));
    assert.ok(!names.includes("spawn_agent"), "a child without subagents cannot spawn");
    await f.host.shutdown();
  });

  test("report_to_parent sets the report; long reports are cut within 8192 bytes, previews within 512", async () => {
    const long = "é".repeat(6000); // 12,000 bytes of UTF-8
    // The report wins over the child's later assistant text.
    const reporter = childAgent(
      "reporter",
      (_task, request) =>
        rawOutputs(request, "report_to_parent").length === 0
          ? { toolCalls: [{ name: "report_to_parent", arguments: { text: long } }] }
          : { text: "The last words." },
    );
    let inspected: Record<string, unknown> | undefined;
    const f = await family([
      { toolCalls: [spawn("reporter", "long")] },
      waitForSpawned,
      (request) => ({
        toolCalls: [{
          name: "inspect_agent",
          arguments: { threadId: toolOutputs(request, "spawn_agent")[0].threadId },
        }],
      }),
      (request) => {
        inspected = toolOutputs(request, "inspect_agent")[0];
        return { text: "read it" };
      },
    ], [reporter]);
    await f.threads.send({ threadId: f.threadId, requestKey: "s1", input: { text: "go" } });
    const view = await f.threads.waitForIdle(f.threadId, { timeoutMs: 10_000 });
    const [agent] = JSON.parse(toolItems(view, "wait_agents")[0].output!).agents;
    assert.equal(agent.status, "completed");
    const bytes = new TextEncoder().encode(agent.report).length;
    assert.ok(bytes <= 8192 && bytes > 8000, `report is ${bytes} bytes`);
    assert.ok(agent.report.startsWith("éé"));
    assert.ok(!agent.report.includes("\uFFFD"), "cut on a character boundary");
    assert.match(agent.report, /\[… cut\]$/);
    assert.ok(inspected);
    assert.equal(inspected.status, "completed");
    const preview = inspected.preview as string;
    assert.ok(new TextEncoder().encode(preview).length <= 512);
    assert.match(preview, /^é+\n\[… cut\]$/);
    await f.host.shutdown();
  });
});

describe("refusals the model sees", () => {
  test("an unknown agent name is an error result listing the valid names", async () => {
    const f = await family(
      [{ toolCalls: [spawn("nobody", "x")] }, { text: "ok" }],
      [childAgent("alpha"), childAgent("beta")],
    );
    await f.threads.send({ threadId: f.threadId, requestKey: "s1", input: { text: "go" } });
    const view = await f.threads.waitForIdle(f.threadId, { timeoutMs: 10_000 });
    const [tool] = toolItems(view, "spawn_agent");
    assert.equal(tool.status, "error");
    assert.match(tool.output!, /Unknown agent "nobody"\. Valid agents: alpha, beta/);
    assert.deepEqual((await f.threads.list({ parentThreadId: f.threadId })).threads, []);
    await f.host.shutdown();
  });

  test("a parent may have at most maxLiveChildren children running or waiting", async () => {
    const slow = childAgent("slow", () => ({ hang: true }));
    const f = await family(
      [{ toolCalls: [spawn("slow", "one"), spawn("slow", "two")] }, { text: "ok" }],
      [slow],
      { subagentLimits: { maxLiveChildren: 1 } },
    );
    await f.threads.send({ threadId: f.threadId, requestKey: "s1", input: { text: "go" } });
    const view = await f.threads.waitForIdle(f.threadId, { timeoutMs: 10_000 });
    const [first, second] = toolItems(view, "spawn_agent");
    assert.equal(first.status, "completed");
    assert.equal(second.status, "error");
    assert.match(second.output!, /1 are still running or waiting \(at most 1\)/);
    const children = await f.threads.list({ parentThreadId: f.threadId });
    assert.equal(children.threads.length, 1);
    await f.threads.cancel({ threadId: f.threadId, requestKey: "c", includeDescendants: true });
    await f.host.shutdown();
  });

  test("children nest at most maxDepth deep", async () => {
    // Every level spawns the next; the level below the limit gets the error.
    const answers: string[] = [];
    const f = await family(
      [{ toolCalls: [spawn("level1", "start")] }, { text: "root done" }],
      [nestingAgent(1, answers, 4, { subagentLimits: { maxDepth: 2 } })],
      { subagentLimits: { maxDepth: 2 } },
    );
    await f.threads.send({ threadId: f.threadId, requestKey: "s1", input: { text: "go" } });
    await settleAll(f);
    assert.match(answers[1], /^\{"threadId":"thread_/, "depth 2 is allowed");
    assert.match(answers[2], /nest at most 2 deep and this one would be at depth 3/);
    await f.host.shutdown();
  });

  test("wait_agents refuses a thread that is not a child of the caller", async () => {
    const f = await family([
      { toolCalls: [{ name: "wait_agents", arguments: { threadIds: ["thread_nope"] } }] },
      { text: "ok" },
    ], [childAgent("alpha")]);
    await f.threads.send({ threadId: f.threadId, requestKey: "s1", input: { text: "go" } });
    const view = await f.threads.waitForIdle(f.threadId, { timeoutMs: 10_000 });
    const [tool] = toolItems(view, "wait_agents");
    assert.equal(tool.status, "error");
    assert.match(tool.output!, /thread_nope/);
    await f.host.shutdown();
  });
});

describe("waiting, inspecting, cancelling", () => {
  test("wait_agents returns the running status when its timeout passes; cancel_agent stops the child", async () => {
    const slow = childAgent("slow", () => ({ hang: true }));
    const f = await family([
      { toolCalls: [spawn("slow", "forever")] },
      (request) => ({
        toolCalls: [{
          name: "wait_agents",
          arguments: {
            threadIds: [toolOutputs(request, "spawn_agent")[0].threadId],
            timeoutMs: 50,
          },
        }],
      }),
      (request) => ({
        toolCalls: [{
          name: "cancel_agent",
          arguments: { threadId: toolOutputs(request, "spawn_agent")[0].threadId },
        }],
      }),
      { text: "stopped it" },
    ], [slow]);
    await f.threads.send({ threadId: f.threadId, requestKey: "s1", input: { text: "go" } });
    const view = await f.threads.waitForIdle(f.threadId, { timeoutMs: 10_000 });
    const childId = JSON.parse(toolItems(view, "spawn_agent")[0].output!).threadId;
    assert.deepEqual(JSON.parse(toolItems(view, "wait_agents")[0].output!), {
      agents: [{ threadId: childId, status: "running" }],
    });
    assert.deepEqual(JSON.parse(toolItems(view, "cancel_agent")[0].output!), {
      threadId: childId,
      status: "cancelled",
    });
    const child = await f.threads.view(childId);
    assert.equal(child.status, "idle");
    assert.equal(child.turns.at(-1)?.outcome, "cancelled");
    await f.host.shutdown();
  });

  test("cancel with includeDescendants stops every descendant before it returns", async () => {
    const leaf = childAgent("leaf", () => ({ hang: true }));
    const middle = defineAgent({
      id: "middle",
      systemPrompt: "Middle.",
      gateway: scriptedGateway([{ toolCalls: [spawn("leaf", "deep")] }, { hang: true }]),
      subagents: [leaf],
    });
    const f = await family([{ toolCalls: [spawn("middle", "mid")] }, { hang: true }], [middle]);
    await f.threads.send({ threadId: f.threadId, requestKey: "s1", input: { text: "go" } });
    // Wait until the grandchild runs.
    let grandchild: string | undefined;
    for (let i = 0; i < 5000 && !grandchild; i++) {
      await new Promise((r) => setTimeout(r, 10));
      const [child] = (await f.threads.list({ parentThreadId: f.threadId })).threads;
      if (!child) continue;
      const [leafThread] = (await f.threads.list({ parentThreadId: child.threadId })).threads;
      if (leafThread?.status === "running") grandchild = leafThread.threadId;
    }
    assert.ok(grandchild, "the grandchild started");
    const { view } = await f.threads.cancel({
      threadId: f.threadId,
      requestKey: "stop-all",
      includeDescendants: true,
    });
    assert.equal(view.turns.at(-1)?.outcome, "cancelled");
    const [child] = (await f.threads.list({ parentThreadId: f.threadId })).threads;
    for (const id of [child.threadId, grandchild]) {
      const seen = await f.threads.view(id);
      assert.notEqual(seen.status, "running");
      assert.equal(seen.turns.at(-1)?.outcome, "cancelled");
    }
    // A replay of the same cancel is fine.
    await f.threads.cancel({
      threadId: f.threadId,
      requestKey: "stop-all",
      includeDescendants: true,
    });
    await f.host.shutdown();
  });

  test("cancel without includeDescendants leaves children running; delete reaches every descendant", async () => {
    const slow = childAgent("slow", () => ({ hang: true }));
    const f = await family([{ toolCalls: [spawn("slow", "s")] }, { text: "parent done" }], [slow]);
    await f.threads.send({ threadId: f.threadId, requestKey: "s1", input: { text: "go" } });
    await f.threads.waitForIdle(f.threadId, { timeoutMs: 10_000 });
    const [child] = (await f.threads.list({ parentThreadId: f.threadId })).threads;
    await f.threads.cancel({ threadId: f.threadId, requestKey: "c1" });
    assert.equal((await f.threads.view(child.threadId)).status, "running");
    await f.threads.delete({ threadId: f.threadId, requestKey: "d1" });
    await assert.rejects(
      f.threads.view(child.threadId),
      (error) => error instanceof FloretError && error.code === "thread_not_found",
    );
    await f.host.shutdown();
  });

  test("every ThreadService command works on a child: send, retry, fork", async () => {
    const f = await family(
      [{ toolCalls: [spawn("alpha", "first task")] }, waitForSpawned, { text: "ok" }],
      [childAgent("alpha")],
    );
    await f.threads.send({ threadId: f.threadId, requestKey: "s1", input: { text: "go" } });
    await settleAll(f);
    const [child] = (await f.threads.list({ parentThreadId: f.threadId })).threads;
    await f.threads.send({ threadId: child.threadId, requestKey: "s2", input: { text: "more" } });
    let view = await f.threads.waitForIdle(child.threadId, { timeoutMs: 10_000 });
    assert.equal(view.items.at(-1)?.text, "alpha report on: more");
    await f.threads.retry({ threadId: child.threadId, requestKey: "r1" });
    view = await f.threads.waitForIdle(child.threadId, { timeoutMs: 10_000 });
    assert.equal(view.turns.at(-1)?.outcome, "completed");
    const fork = await f.threads.fork({ threadId: child.threadId, requestKey: "f1" });
    assert.equal(fork.view.parentThreadId, undefined, "a fork is a root thread");
    await f.host.shutdown();
  });
});
