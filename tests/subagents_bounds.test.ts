// Sub-agent precise points (DESIGN.md §10) about bounds and tool outputs: the
// default bounds (depth 3, 8 live children), the tool output shapes for running
// and failed children, the last report winning, and the report size bound.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { type ProviderRequest } from "@floret/engine";
import {
  childAgent,
  family,
  nestingAgent,
  rawOutputs,
  settleAll,
  spawnAndWait,
  spawnCall,
  toolItems,
  toolOutputs,
  waitForSpawned,
} from "./support/subagents.ts";

describe("default bounds", () => {
  test("without subagentLimits a parent has at most 8 live children; the 9th spawn is an error result", async () => {
    const slow = childAgent("slow", () => ({ hang: true }));
    const calls = Array.from({ length: 9 }, (_, i) => spawnCall("slow", `task ${i}`));
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
    const f = await family([
      { toolCalls: [spawnCall("level1", "start")] },
      (request) => {
        answers[0] = rawOutputs(request, "spawn_agent")[0];
        return { text: "root done" };
      },
    ], [nestingAgent(1, answers, 5)]);
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
      { toolCalls: [spawnCall("slow", "forever")] },
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
    const f = await spawnAndWait(broken, { parentEvents: true }, "try", "it failed");
    const { seen } = f;
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
      { toolCalls: [spawnCall("alpha", "one")] },
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
    const f = await spawnAndWait(reporter);
    await f.threads.send({ threadId: f.threadId, requestKey: "s1", input: { text: "go" } });
    await f.threads.waitForIdle(f.threadId, { timeoutMs: 10_000 });
    const waited: unknown = toolOutputs(f.seen[0], "wait_agents")[0];
    const { agents } = waited as { agents: { status: string; report: string }[] };
    assert.equal(agents[0].status, "completed");
    assert.equal(agents[0].report, "report 2");
    await f.host.shutdown();
  });

  test("a report of exactly 8192 bytes is kept whole", async () => {
    const exact = "a".repeat(8190) + "é"; // 8192 bytes of UTF-8
    const reporter = childAgent("reporter", () => ({ text: exact }));
    const f = await spawnAndWait(reporter);
    await f.threads.send({ threadId: f.threadId, requestKey: "s1", input: { text: "go" } });
    await f.threads.waitForIdle(f.threadId, { timeoutMs: 10_000 });
    const waited: unknown = toolOutputs(f.seen[0], "wait_agents")[0];
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
      { toolCalls: [spawnCall("reporter", "long"), spawnCall("reporter", "exact")] },
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
