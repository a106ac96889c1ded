// Sub-agent precise points (DESIGN.md §10) that the other sub-agent tests
// leave out: the default bounds (depth 3, 8 live children), the tool output
// shapes for running and failed children, the last report winning, history
// and subscribe on a child, and cancel/delete reaching grandchildren.
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
  type ThreadView,
} from "@floret/engine";
import { scriptedGateway } from "@floret/engine/testing";
import { z } from "zod";
import {
  childAgent,
  family,
  rawOutputs,
  settleAll,
  toolOutputs,
  waitForSpawned,
} from "./support/subagents.ts";

const spawn = (agent: string, task: string) => ({
  name: "spawn_agent",
  arguments: { agent, task },
});

function toolItems(view: ThreadView, name: string) {
  return view.items.filter((item) => item.tool?.name === name).map((item) => item.tool!);
}

/** Polls until `check` holds (a bounded wait on state, never on time itself). */
async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 1000; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  assert.fail(`never: ${what}`);
}

describe("default bounds", () => {
  test("without subagentLimits a parent has at most 8 live children; the 9th spawn is an error result", async () => {
    const slow = childAgent("slow", () => ({ hang: true }));
    const calls = Array.from({ length: 9 }, (_, i) => spawn("slow", `task ${i}`));
    let seen: string[] = [];
    const f = await family([{ toolCalls: calls }, (request: ProviderRequest) => {
      seen = rawOutputs(request, "spawn_agent");
      return { text: "ok" };
    }], [slow]);
    await f.threads.send({ threadId: f.threadId, requestKey: "s1", input: { text: "go" } });
    const view = await f.threads.waitForIdle(f.threadId, { timeoutMs: 10_000 });
    const spawned = toolItems(view, "spawn_agent");
    assert.equal(spawned.length, 9);
    assert.deepEqual(spawned.slice(0, 8).map((t) => t.status), Array(8).fill("completed"));
    assert.equal(spawned[8].status, "error");
    assert.match(spawned[8].output!, /at most 8/);
    // The model saw the refusal as its tool result.
    assert.match(seen[8], /at most 8/);
    assert.equal(
      (await f.threads.list({ parentThreadId: f.threadId, limit: 50 })).threads.length,
      8,
    );
    await f.threads.cancel({ threadId: f.threadId, requestKey: "c", includeDescendants: true });
    await f.host.shutdown();
  });

  test("without subagentLimits children nest 3 deep; a 4th level is an error result", async () => {
    const answers: string[] = [];
    const nester = (depth: number): ReturnType<typeof childAgent> =>
      defineAgent({
        id: `level${depth}`,
        systemPrompt: "Nest.",
        gateway: scriptedGateway([
          { toolCalls: [spawn(`level${depth + 1}`, "deeper")] },
          (request) => {
            answers[depth] = rawOutputs(request, "spawn_agent")[0];
            return { text: `level ${depth} done` };
          },
        ]),
        subagents: depth < 5 ? [nester(depth + 1)] : [],
      });
    const f = await family([
      { toolCalls: [spawn("level1", "start")] },
      (request) => {
        answers[0] = rawOutputs(request, "spawn_agent")[0];
        return { text: "root done" };
      },
    ], [nester(1)]);
    await f.threads.send({ threadId: f.threadId, requestKey: "s1", input: { text: "go" } });
    await settleAll(f);
    for (const depth of [0, 1, 2]) {
      assert.match(answers[depth], /^\{"threadId":"thread_/, `a child at depth ${depth + 1}`);
    }
    assert.match(answers[3], /nest at most 3 deep/);
    await f.host.shutdown();
  });
});

describe("tool output shapes", () => {
  test("inspect_agent on a running child is exactly {threadId, status: running}", async () => {
    const slow = childAgent("slow", () => ({ hang: true }));
    let inspected: unknown;
    const f = await family([
      { toolCalls: [spawn("slow", "forever")] },
      (request) => ({
        toolCalls: [{
          name: "inspect_agent",
          arguments: { threadId: toolOutputs(request, "spawn_agent")[0].threadId },
        }],
      }),
      (request) => {
        inspected = toolOutputs(request, "inspect_agent")[0];
        return { text: "looked" };
      },
    ], [slow]);
    await f.threads.send({ threadId: f.threadId, requestKey: "s1", input: { text: "go" } });
    const view = await f.threads.waitForIdle(f.threadId, { timeoutMs: 10_000 });
    const childId = JSON.parse(toolItems(view, "spawn_agent")[0].output!).threadId;
    assert.deepEqual(inspected, { threadId: childId, status: "running" });
    await f.threads.cancel({ threadId: f.threadId, requestKey: "c", includeDescendants: true });
    await f.host.shutdown();
  });

  test("a failed child: wait_agents says failed, and parentEvents admits one failed fact", async () => {
    const broken = childAgent("broken", () => ({
      error: { message: "model refused", retry: "never" },
    }));
    const seen: ProviderRequest[] = [];
    const f = await family(
      [
        { toolCalls: [spawn("broken", "try")] },
        waitForSpawned,
        (request) => {
          seen.push(request);
          return { text: "it failed" };
        },
      ],
      [broken],
      { parentEvents: true },
    );
    await f.threads.send({ threadId: f.threadId, requestKey: "s1", input: { text: "go" } });
    await f.threads.waitForIdle(f.threadId, { timeoutMs: 10_000 });
    const [waited] = toolOutputs(seen[0], "wait_agents") as {
      agents: { threadId: string; status: string; report?: string }[];
    }[];
    assert.equal(waited.agents.length, 1);
    assert.equal(waited.agents[0].status, "failed");
    assert.equal(waited.agents[0].report, undefined, "a child that said nothing has no report");
    const facts = seen[0].messages.filter((m) =>
      m.role === "user" && m.text.startsWith(`[sub-agent ${waited.agents[0].threadId}]`)
    );
    assert.equal(facts.length, 1);
    assert.match((facts[0] as { text: string }).text, / failed\b/);
    await f.host.shutdown();
  });

  test("wait_agents takes a timeoutMs above 30 minutes (capped, not refused)", async () => {
    const f = await family([
      { toolCalls: [spawn("alpha", "one")] },
      (request) => ({
        toolCalls: [{
          name: "wait_agents",
          arguments: {
            threadIds: [toolOutputs(request, "spawn_agent")[0].threadId],
            timeoutMs: 24 * 3_600_000,
          },
        }],
      }),
      { text: "ok" },
    ], [childAgent("alpha")]);
    await f.threads.send({ threadId: f.threadId, requestKey: "s1", input: { text: "go" } });
    const view = await f.threads.waitForIdle(f.threadId, { timeoutMs: 10_000 });
    const [wait] = toolItems(view, "wait_agents");
    assert.equal(wait.status, "completed", String(wait.output));
    assert.equal(JSON.parse(wait.output!).agents[0].status, "completed");
    await f.host.shutdown();
  });

  test("the last report_to_parent wins over earlier reports and later assistant text", async () => {
    const reporter = childAgent("reporter", (_task, request) => {
      const reported = rawOutputs(request, "report_to_parent").length;
      if (reported < 2) {
        return {
          toolCalls: [{ name: "report_to_parent", arguments: { text: `report ${reported + 1}` } }],
        };
      }
      return { text: "closing words" };
    });
    let waited: unknown;
    const f = await family([
      { toolCalls: [spawn("reporter", "go")] },
      waitForSpawned,
      (request) => {
        waited = toolOutputs(request, "wait_agents")[0];
        return { text: "ok" };
      },
    ], [reporter]);
    await f.threads.send({ threadId: f.threadId, requestKey: "s1", input: { text: "go" } });
    await f.threads.waitForIdle(f.threadId, { timeoutMs: 10_000 });
    const { agents } = waited as { agents: { status: string; report: string }[] };
    assert.equal(agents[0].status, "completed");
    assert.equal(agents[0].report, "report 2");
    await f.host.shutdown();
  });

  test("a report of exactly 8192 bytes is kept whole", async () => {
    const exact = "a".repeat(8190) + "é"; // 8192 bytes of UTF-8
    const reporter = childAgent("reporter", () => ({ text: exact }));
    let waited: unknown;
    const f = await family([
      { toolCalls: [spawn("reporter", "go")] },
      waitForSpawned,
      (request) => {
        waited = toolOutputs(request, "wait_agents")[0];
        return { text: "ok" };
      },
    ], [reporter]);
    await f.threads.send({ threadId: f.threadId, requestKey: "s1", input: { text: "go" } });
    await f.threads.waitForIdle(f.threadId, { timeoutMs: 10_000 });
    assert.equal((waited as { agents: { report: string }[] }).agents[0].report, exact);
    await f.host.shutdown();
  });
});

describe("report bounds the child sees", () => {
  test("report_to_parent over 8192 bytes is an error result for the child; the parent gets the head, cut", async () => {
    const long = "x".repeat(9000);
    const exact = "y".repeat(8192);
    const seenByChild: { output: string; isError?: boolean }[] = [];
    const reporter = childAgent("reporter", (task, request) => {
      const results = request.messages.flatMap((m) =>
        m.role === "tool" && m.name === "report_to_parent" ? [m] : []
      );
      if (results.length === 0) {
        const text = task === "long" ? long : exact;
        return { toolCalls: [{ name: "report_to_parent", arguments: { text } }] };
      }
      seenByChild.push(...results.map((m) => ({ output: m.output, isError: m.isError })));
      return { text: "finished" };
    });
    let waited: { agents: { threadId: string; status: string; report: string }[] } | undefined;
    const f = await family([
      { toolCalls: [spawn("reporter", "long"), spawn("reporter", "exact")] },
      waitForSpawned,
      (request) => {
        waited = toolOutputs(request, "wait_agents")[0] as typeof waited;
        return { text: "ok" };
      },
    ], [reporter]);
    await f.threads.send({ threadId: f.threadId, requestKey: "s1", input: { text: "go" } });
    await f.threads.waitForIdle(f.threadId, { timeoutMs: 10_000 });
    const [cut, whole] = waited!.agents;
    assert.equal(cut.status, "completed");
    assert.ok(new TextEncoder().encode(cut.report).length <= 8192);
    assert.ok(cut.report.startsWith("xxxx"));
    assert.match(cut.report, /\[… cut\]$/);
    assert.equal(whole.report, exact, "exactly 8192 bytes is kept whole");
    const flagged = seenByChild.filter((r) => r.isError === true);
    assert.equal(flagged.length, 1, "only the long report is an error result");
    assert.match(flagged[0].output, /Report too long: 9000 bytes, at most 8192/);
    await f.host.shutdown();
  });
});

describe("a child is an ordinary thread", () => {
  test("history, subscribe, setTitle, context and compact work on a child", async () => {
    const f = await family(
      [{ toolCalls: [spawn("alpha", "first task")] }, waitForSpawned, { text: "ok" }],
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
      gateway: scriptedGateway([{ toolCalls: [spawn("leaf", "deep")] }, { hang: true }]),
      subagents: [leaf],
    });
    const f = await family([{ toolCalls: [spawn("middle", "mid")] }, { text: "lead done" }], [
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
      gateway: scriptedGateway([{ toolCalls: [spawn("leaf", "deep")] }, { hang: true }]),
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
      { toolCalls: [spawn("middle", "mid")] },
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
      [{ toolCalls: [spawn("slow", "forever")] }, { text: "started" }],
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
        { toolCalls: [spawn("asker", "ask"), spawn("finisher", "finish")] },
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
