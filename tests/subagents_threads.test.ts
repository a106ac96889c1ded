// Sub-agent precise points (DESIGN.md §10) about a child as a thread: history
// and subscribe on a child, cancel/delete reaching grandchildren, a child cut
// off by a restart, and the order of parent events.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import {
  defineAgent,
  defineTool,
  FloretError,
  memoryStore,
  openHost,
  type ProviderRequest,
  type ThreadService,
} from "@floret/engine";
import { scriptedGateway } from "@floret/engine/testing";
import { z } from "zod";
import {
  childAgent,
  family,
  rawOutputs,
  settleAll,
  spawnCall,
  toolItems,
  toolOutputs,
  waitForSpawned,
} from "./support/subagents.ts";

/** Polls until `check` holds (a bounded wait on state, never on time itself). */
async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 1000; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  assert.fail(`never: ${what}`);
}

describe("a child is an ordinary thread", () => {
  test("history, subscribe, setTitle, context and compact work on a child", async () => {
    const f = await family(
      [{ toolCalls: [spawnCall("alpha", "first task")] }, waitForSpawned, { text: "ok" }],
      [childAgent("alpha")],
    );
    await f.threads.send({ threadId: f.threadId, requestKey: "s1", input: { text: "go" } });
    await settleAll(f);
    const [child] = (await f.threads.list({ parentThreadId: f.threadId })).threads;
    assert.equal(child.parentThreadId, f.threadId);
    const page = await f.threads.history(child.threadId, { limit: 10 });
    assert.deepEqual(page.items.map((i) => [i.kind, i.text]), [
      ["user", "first task"],
      ["assistant", "alpha report on: first task"],
    ]);
    assert.equal(page.hasMore, false);

    const stop = new AbortController();
    const updates = f.threads.subscribe(child.threadId, { signal: stop.signal });
    const iterator = updates[Symbol.asyncIterator]();
    await f.threads.send({ threadId: child.threadId, requestKey: "s2", input: { text: "more" } });
    const first = await iterator.next();
    assert.equal(first.done, false);
    assert.ok(["batch", "resync"].includes((first.value as { type: string }).type));
    stop.abort();
    await f.threads.waitForIdle(child.threadId, { timeoutMs: 10_000 });

    // Titles, context figures and compaction work on a child like on any thread.
    const titled = await f.threads.setTitle({
      threadId: child.threadId,
      requestKey: "t1",
      title: "Renamed child",
    });
    assert.equal(titled.view.title, "Renamed child");
    assert.equal(titled.view.parentThreadId, f.threadId);
    const figures = await f.threads.context(child.threadId);
    assert.ok(figures.windowTokens > 0);
    const compacted = await f.threads.compact({ threadId: child.threadId, requestKey: "k1" });
    assert.ok(compacted);
    const [listed] = (await f.threads.list({ parentThreadId: f.threadId })).threads;
    assert.equal(listed.title, "Renamed child");
    await f.host.shutdown();
  });
});

describe("reaching descendants", () => {
  /** A parent whose child starts a grandchild; both hang until stopped. */
  async function threeGenerations() {
    const leaf = childAgent("leaf", () => ({ hang: true }));
    const middle = defineAgent({
      id: "middle",
      systemPrompt: "Middle.",
      gateway: scriptedGateway([{ toolCalls: [spawnCall("leaf", "deep")] }, { hang: true }]),
      subagents: [leaf],
    });
    const f = await family([{ toolCalls: [spawnCall("middle", "mid")] }, { text: "lead done" }], [
      middle,
    ]);
    await f.threads.send({ threadId: f.threadId, requestKey: "s1", input: { text: "go" } });
    let childId = "";
    let grandchildId = "";
    await until(async () => {
      const [child] = (await f.threads.list({ parentThreadId: f.threadId })).threads;
      if (!child) return false;
      childId = child.threadId;
      const [leafThread] = (await f.threads.list({ parentThreadId: child.threadId })).threads;
      grandchildId = leafThread?.threadId ?? "";
      return leafThread?.status === "running";
    }, "the grandchild runs");
    return { f, childId, grandchildId };
  }

  test("cancel({ includeDescendants }) on an idle parent still stops running descendants", async () => {
    const { f, childId, grandchildId } = await threeGenerations();
    await f.threads.waitForIdle(f.threadId, { timeoutMs: 10_000 });
    await f.threads.cancel({ threadId: f.threadId, requestKey: "c1", includeDescendants: true });
    for (const id of [childId, grandchildId]) {
      const view = await f.threads.view(id);
      assert.notEqual(view.status, "running");
      assert.equal(view.turns.at(-1)?.outcome, "cancelled");
    }
    await f.host.shutdown();
  });

  test("delete of a parent removes children and grandchildren", async () => {
    const { f, childId, grandchildId } = await threeGenerations();
    await f.threads.delete({ threadId: f.threadId, requestKey: "d1" });
    for (const id of [f.threadId, childId, grandchildId]) {
      await assert.rejects(
        f.threads.view(id),
        (error) => error instanceof FloretError && error.code === "thread_not_found",
      );
    }
    assert.deepEqual((await f.threads.list()).threads, []);
    // The deleted parent's children are not listed either: the parent is gone.
    await assert.rejects(
      f.threads.list({ parentThreadId: f.threadId }),
      (error) => error instanceof FloretError && error.code === "thread_not_found",
    );
    await f.host.shutdown();
  });

  test("cancel_agent stops the child and the agents it started", async () => {
    let leafRuns = false;
    const leaf = childAgent("leaf", () => {
      leafRuns = true;
      return { hang: true };
    });
    const middle = defineAgent({
      id: "middle",
      systemPrompt: "Middle.",
      gateway: scriptedGateway([{ toolCalls: [spawnCall("leaf", "deep")] }, { hang: true }]),
      subagents: [leaf],
    });
    let childId = "";
    // Until the grandchild runs, the lead polls with short waits; then it cancels its child.
    const poll = (request: ProviderRequest) => {
      childId = toolOutputs(request, "spawn_agent")[0].threadId as string;
      return leafRuns
        ? { toolCalls: [{ name: "cancel_agent", arguments: { threadId: childId } }] }
        : {
          toolCalls: [{ name: "wait_agents", arguments: { threadIds: [childId], timeoutMs: 10 } }],
        };
    };
    const f = await family([
      { toolCalls: [spawnCall("middle", "mid")] },
      ...Array.from({ length: 500 }, () => (request: ProviderRequest) => {
        const cancelled = rawOutputs(request, "cancel_agent").length > 0;
        return cancelled ? { text: "stopped" } : poll(request);
      }),
    ], [middle]);
    await f.threads.send({ threadId: f.threadId, requestKey: "s1", input: { text: "go" } });
    const view = await f.threads.waitForIdle(f.threadId, { timeoutMs: 20_000 });
    const [cancelled] = toolItems(view, "cancel_agent");
    assert.ok(cancelled, "the lead cancelled its child");
    assert.equal(cancelled.status, "completed", String(cancelled.output));
    assert.deepEqual(JSON.parse(cancelled.output!), { threadId: childId, status: "cancelled" });
    const [grandchild] = (await f.threads.list({ parentThreadId: childId })).threads;
    const seen = await f.threads.view(grandchild.threadId);
    assert.notEqual(seen.status, "running");
    assert.equal(seen.turns.at(-1)?.outcome, "cancelled");
    await f.host.shutdown();
  });
});

describe("after a restart", () => {
  test("a child cut off by a shutdown reads `interrupted` in wait_agents and inspect_agent", async () => {
    // Shutdown closes the store; this one outlives each host, like a file would.
    const inner = memoryStore();
    const store = { ...inner, close: () => Promise.resolve() };
    const slow = childAgent("slow", () => ({ hang: true }));
    const f = await family(
      [{ toolCalls: [spawnCall("slow", "forever")] }, { text: "started" }],
      [slow],
      {},
      store,
    );
    await f.threads.send({ threadId: f.threadId, requestKey: "s1", input: { text: "go" } });
    await f.threads.waitForIdle(f.threadId, { timeoutMs: 10_000 });
    const [child] = (await f.threads.list({ parentThreadId: f.threadId })).threads;
    await until(
      async () => (await f.threads.view(child.threadId)).status === "running",
      "the child runs",
    );
    await f.host.shutdown();

    const gateway = scriptedGateway([
      {
        toolCalls: [
          { name: "wait_agents", arguments: { threadIds: [child.threadId] } },
          { name: "inspect_agent", arguments: { threadId: child.threadId } },
        ],
      },
      { text: "seen" },
    ]);
    const parent = defineAgent({
      id: "lead",
      systemPrompt: "You lead.",
      gateway,
      subagents: [childAgent("slow")],
    });
    const host = await openHost({ store });
    const threads = host.threads({ agent: parent });
    await threads.send({ threadId: f.threadId, requestKey: "s2", input: { text: "status?" } });
    await threads.waitForIdle(f.threadId, { timeoutMs: 10_000 });
    const request = gateway.requests[1];
    assert.deepEqual(toolOutputs(request, "wait_agents"), [
      { agents: [{ threadId: child.threadId, status: "interrupted" }] },
    ]);
    assert.deepEqual(toolOutputs(request, "inspect_agent"), [
      { threadId: child.threadId, status: "interrupted" },
    ]);
    await host.shutdown();
  });
});

describe("parent events in order", () => {
  test("a question asked before a sibling completed is admitted before that completion", async () => {
    // Filled once the family is open; the children's tools read the lead through it.
    const lead: { threads?: ThreadService; id: string } = { id: "" };
    const deploy = defineTool({
      name: "deploy",
      description: "Deploys (needs approval)",
      input: z.object({}),
      effect: "write",
      permission: "ask",
      execute: () => "deployed",
    });
    // The finisher completes only once its sibling waits for approval: a fixed order of facts.
    const afterSibling = defineTool({
      name: "after_sibling",
      description: "Returns once a sibling waits",
      input: z.object({}),
      effect: "read",
      execute: async () => {
        await until(async () => {
          const { threads: children } = await lead.threads!.list({ parentThreadId: lead.id });
          return children.some((child) => child.status === "waiting");
        }, "the sibling waits");
        return "it waits";
      },
    });
    // The asker asks only while the lead sits in wait_agents, so both facts
    // are new at the same provider boundary and only their times order them.
    const afterLeadWaits = defineTool({
      name: "after_lead_waits",
      description: "Returns once the lead waits",
      input: z.object({}),
      effect: "read",
      execute: async () => {
        await until(async () => {
          const view = await lead.threads!.view(lead.id);
          return view.items.some((i) =>
            i.tool?.name === "wait_agents" && i.tool.status === "running"
          );
        }, "the lead waits");
        return "it waits";
      },
    });
    const asker = defineAgent({
      id: "asker",
      systemPrompt: "Ask.",
      gateway: scriptedGateway([
        { toolCalls: [{ name: "after_lead_waits", arguments: {} }] },
        { toolCalls: [{ name: "deploy", arguments: {} }] },
      ]),
      tools: [deploy, afterLeadWaits],
    });
    const finisher = defineAgent({
      id: "finisher",
      systemPrompt: "Finish.",
      gateway: scriptedGateway([
        { toolCalls: [{ name: "after_sibling", arguments: {} }] },
        { text: "finished" },
      ]),
      tools: [afterSibling],
    });
    const seen: ProviderRequest[] = [];
    const f = await family(
      [
        { toolCalls: [spawnCall("asker", "ask"), spawnCall("finisher", "finish")] },
        waitForSpawned,
        (request) => {
          seen.push(request);
          return { text: "noted" };
        },
      ],
      [asker, finisher],
      { parentEvents: true },
    );
    lead.threads = f.threads;
    lead.id = f.threadId;
    await f.threads.send({ threadId: f.threadId, requestKey: "s1", input: { text: "go" } });
    await f.threads.waitForIdle(f.threadId, { timeoutMs: 10_000 });
    const [askerId, finisherId] = toolOutputs(seen[0], "spawn_agent").map((o) => o.threadId);
    const facts = seen[0].messages.flatMap((m) =>
      m.role === "user" && m.text.startsWith("[sub-agent ") ? [m.text] : []
    );
    assert.deepEqual(facts, [
      `[sub-agent ${askerId}] needs_approval: it waits for approval of a deploy call`,
      `[sub-agent ${finisherId}] completed\nReport:\nfinished`,
    ]);
    await f.threads.cancel({ threadId: f.threadId, requestKey: "c", includeDescendants: true });
    await f.host.shutdown();
  });
});
