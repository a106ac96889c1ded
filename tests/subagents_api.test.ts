// Sub-agents through the public surface: the contract's second-wave types,
// agentFactory asked for root threads only, and the HTTP API carrying
// `list({ parentThreadId })` and `cancel({ includeDescendants })`.
import { test } from "node:test";
import assert from "node:assert/strict";
import type * as Contract from "./contract/public-api.d.ts";
import { defineAgent, memoryStore, openHost, type ThreadService } from "@floret/engine";
import { scriptedGateway } from "@floret/engine/testing";
import { overHttp } from "./support/over_http.ts";
import { childAgent, family, settleAll, toolOutputs } from "./support/subagents.ts";

// Type-level: the service takes the contract's wave-2 list and cancel inputs.
type ListTakesWave2 = Contract.ListOptionsWave2 extends
  NonNullable<Parameters<ThreadService["list"]>[0]> ? true : never;
type CancelTakesWave2 = Parameters<Contract.ThreadServiceWave2["cancel"]>[0] extends
  Parameters<ThreadService["cancel"]>[0] ? true : never;
const wave2: [ListTakesWave2, CancelTakesWave2] = [true, true];

test("types: list and cancel take the contract's wave-2 inputs", () => {
  assert.deepEqual(wave2, [true, true]);
});

test("agentFactory is asked for root threads only; children run their recorded subagent", async () => {
  const asked: string[] = [];
  const worker = childAgent("worker");
  const lead = defineAgent({
    id: "lead",
    systemPrompt: "Lead.",
    gateway: scriptedGateway([
      { toolCalls: [{ name: "spawn_agent", arguments: { agent: "worker", task: "t" } }] },
      (request) => ({
        toolCalls: [{
          name: "wait_agents",
          arguments: { threadIds: [toolOutputs(request, "spawn_agent")[0].threadId] },
        }],
      }),
      { text: "done" },
    ]),
    subagents: [worker],
  });
  const host = await openHost({ store: memoryStore() });
  const threads = host.threads({
    agentFactory: ({ threadId }) => {
      asked.push(threadId);
      return lead;
    },
  });
  const { threadId } = await threads.create({ requestKey: "c" });
  await threads.send({ threadId, requestKey: "s", input: { text: "go" } });
  const view = await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
  assert.equal(view.items.at(-1)?.text, "done");
  const [child] = (await threads.list({ parentThreadId: threadId })).threads;
  assert.equal((await threads.view(child.threadId)).turns[0].outcome, "completed");
  assert.ok(asked.length >= 1);
  assert.ok(asked.every((id) => id === threadId), "never asked for the child");
  await host.shutdown();
});

test("over HTTP: list({ parentThreadId }) and cancel({ includeDescendants })", async () => {
  const slow = childAgent("slow", () => ({ hang: true }));
  const lead = defineAgent({
    id: "lead",
    systemPrompt: "Lead.",
    gateway: scriptedGateway([
      { toolCalls: [{ name: "spawn_agent", arguments: { agent: "slow", task: "t" } }] },
      { hang: true },
    ]),
    subagents: [slow],
  });
  const host = await openHost({ store: memoryStore() });
  const remote = overHttp(host.threads({ agent: lead }));
  const { threadId } = await remote.create({ requestKey: "c" });
  await remote.send({ threadId, requestKey: "s", input: { text: "go" } });
  let children: { threadId: string; parentThreadId?: string }[] = [];
  for (let i = 0; i < 5000 && children.length === 0; i++) {
    await new Promise((r) => setTimeout(r, 10));
    children = (await remote.list({ parentThreadId: threadId })).threads;
  }
  assert.equal(children.length, 1);
  assert.equal(children[0].parentThreadId, threadId);
  assert.deepEqual((await remote.list()).threads.map((t) => t.threadId), [threadId]);
  await remote.cancel({ threadId, requestKey: "stop", includeDescendants: true });
  const child = await remote.view(children[0].threadId);
  assert.equal(child.turns.at(-1)?.outcome, "cancelled");
  await host.shutdown();
});

test("list() fills its pages with root threads even when children were updated more recently", async () => {
  const f = await family(
    [{
      toolCalls: [1, 2, 3, 4].map((n) => ({
        name: "spawn_agent",
        arguments: { agent: "alpha", task: `t${n}` },
      })),
    }, { text: "ok" }],
    [childAgent("alpha")],
  );
  const roots = [f.threadId];
  for (const n of [1, 2]) {
    roots.push((await f.threads.create({ requestKey: `root-${n}` })).threadId);
  }
  await f.threads.send({ threadId: f.threadId, requestKey: "s", input: { text: "go" } });
  await settleAll(f);
  const seen: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await f.threads.list({ limit: 2, cursor });
    assert.ok(
      page.threads.length === 2 || page.cursor === undefined,
      "only the last page is short",
    );
    seen.push(...page.threads.map((t) => t.threadId));
    cursor = page.cursor;
  } while (cursor);
  assert.deepEqual(seen.sort(), roots.sort());
  await f.host.shutdown();
});

test("defineAgent refuses tools that take the built-in sub-agent names, and bad limits", async () => {
  const { defineTool, FloretError } = await import("@floret/engine");
  const { z } = await import("zod");
  const named = (name: string) =>
    defineTool({ name, description: "x", input: z.object({}), execute: () => "x" });
  const gateway = scriptedGateway([]);
  const worker = defineAgent({ id: "w", systemPrompt: "", gateway });
  const invalid = (error: unknown) =>
    error instanceof FloretError && error.code === "invalid_input";
  assert.throws(
    () =>
      defineAgent({
        id: "l",
        systemPrompt: "",
        gateway,
        subagents: [worker],
        tools: [named("spawn_agent")],
      }),
    invalid,
  );
  const reporting = defineAgent({
    id: "r",
    systemPrompt: "",
    gateway,
    tools: [named("report_to_parent")],
  });
  assert.throws(
    () => defineAgent({ id: "l", systemPrompt: "", gateway, subagents: [reporting] }),
    invalid,
  );
  assert.throws(
    () =>
      defineAgent({
        id: "l",
        systemPrompt: "",
        gateway,
        subagents: [worker],
        subagentLimits: { maxDepth: 0 },
      }),
    invalid,
  );
  // Without subagents the names are free.
  defineAgent({ id: "l", systemPrompt: "", gateway, tools: [named("spawn_agent")] });
});

test("over HTTP, listing a thread's children asks authorize about that thread", async () => {
  const { threadApi, threadClient } = await import("@floret/engine/http");
  const host = await openHost({ store: memoryStore() });
  const threads = host.threads({
    agent: defineAgent({ id: "a", systemPrompt: "", gateway: scriptedGateway([]) }),
  });
  const { threadId } = await threads.create({ requestKey: "c" });
  const asked: (string | undefined)[] = [];
  const app = threadApi(threads, {
    authorize: ({ action, threadId }) => {
      if (action === "list") asked.push(threadId);
      return threadId !== "thread_forbidden";
    },
  });
  const client = threadClient({ baseUrl: "http://127.0.0.1", fetch: (r) => app.fetch(r) });
  await client.list();
  await client.list({ parentThreadId: threadId });
  await assert.rejects(client.list({ parentThreadId: "thread_forbidden" }));
  assert.deepEqual(asked, [undefined, threadId, "thread_forbidden"]);
  await host.shutdown();
});
