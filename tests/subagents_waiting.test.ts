// A child that needs a person (DESIGN.md §10): its pending approval or
// question is answered with `respond` on the child thread; the parent's
// wait_agents returns `waiting` for it, and with parentEvents the parent's
// next request says so (needs approval / needs input), once.
import { test } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import { defineAgent, defineTool, type ProviderRequest } from "@floret/engine";
import { scriptedGateway } from "@floret/engine/testing";
import { family, toolOutputs, waitForSpawned } from "./support/subagents.ts";

const deploy = defineTool({
  name: "deploy",
  description: "Deploys (needs approval)",
  input: z.object({}),
  effect: "write",
  permission: "ask",
  execute: () => "deployed",
});

test("a child waiting for approval reads `waiting`; respond on the child lets it finish", async () => {
  const seen: ProviderRequest[] = [];
  const child = defineAgent({
    id: "deployer",
    systemPrompt: "Deploy.",
    gateway: scriptedGateway([
      { toolCalls: [{ name: "deploy", arguments: {} }] },
      { text: "Deployed it." },
    ]),
    tools: [deploy],
  });
  const f = await family(
    [
      { toolCalls: [{ name: "spawn_agent", arguments: { agent: "deployer", task: "ship" } }] },
      waitForSpawned,
      (request) => {
        seen.push(request);
        return { text: "The deployer needs an approval." };
      },
      // The next turn, after the host approved on the child thread.
      waitForSpawned,
      (request) => {
        seen.push(request);
        return { text: "all done" };
      },
    ],
    [child],
    { parentEvents: true },
  );
  await f.threads.send({ threadId: f.threadId, requestKey: "s1", input: { text: "go" } });
  await f.threads.waitForIdle(f.threadId, { timeoutMs: 10_000 });
  const [first] = toolOutputs(seen[0], "wait_agents") as {
    agents: { threadId: string; status: string }[];
  }[];
  const childId = first.agents[0].threadId;
  assert.equal(first.agents[0].status, "waiting", "wait_agents returns for a waiting child");
  const facts = (request: ProviderRequest) =>
    request.messages.flatMap((m) =>
      m.role === "user" && m.text.startsWith("[sub-agent") ? [m.text] : []
    );
  assert.equal(facts(seen[0]).length, 1);
  assert.match(facts(seen[0])[0], /needs_approval: it waits for approval of a deploy call/);

  // The host answers on the child thread.
  const waiting = await f.threads.view(childId);
  assert.equal(waiting.status, "waiting");
  await f.threads.respond({
    threadId: childId,
    requestKey: "ok",
    interactionId: waiting.pending[0].id,
    decision: "approve",
  });
  const done = await f.threads.waitForIdle(childId, { timeoutMs: 10_000 });
  assert.equal(done.turns.at(-1)?.outcome, "completed");
  assert.equal(
    (await f.threads.view(f.threadId)).turns.length,
    1,
    "the child's completion starts no parent turn",
  );

  await f.threads.send({ threadId: f.threadId, requestKey: "s2", input: { text: "and now?" } });
  const view = await f.threads.waitForIdle(f.threadId, { timeoutMs: 10_000 });
  assert.equal(view.items.at(-1)?.text, "all done");
  const second = toolOutputs(seen[1], "wait_agents").at(-1) as { agents: unknown[] };
  assert.deepEqual(second.agents, [
    { threadId: childId, status: "completed", report: "Deployed it." },
  ]);
  const later = facts(seen[1]);
  assert.equal(later.length, 2, "the approval fact once, then the completion");
  assert.match(later[1], /\] completed\nReport:\nDeployed it\.$/);
  await f.host.shutdown();
});

test(
  "a child asking a question reads `waiting`; the parent learns it needs input; answers go to the child",
  async () => {
    const seen: ProviderRequest[] = [];
    const child = defineAgent({
      id: "asker",
      systemPrompt: "Ask.",
      gateway: scriptedGateway([
        {
          toolCalls: [{
            name: "ask_user",
            arguments: { questions: [{ id: "colour", prompt: "Which colour?" }] },
          }],
        },
        { text: "Painted it blue." },
      ]),
    });
    const f = await family(
      [
        { toolCalls: [{ name: "spawn_agent", arguments: { agent: "asker", task: "paint" } }] },
        waitForSpawned,
        (request) => {
          seen.push(request);
          return { text: "It asks something." };
        },
      ],
      [child],
      { parentEvents: true },
    );
    await f.threads.send({ threadId: f.threadId, requestKey: "s1", input: { text: "go" } });
    await f.threads.waitForIdle(f.threadId, { timeoutMs: 10_000 });
    const [waited] = toolOutputs(seen[0], "wait_agents") as {
      agents: { threadId: string; status: string }[];
    }[];
    assert.equal(waited.agents[0].status, "waiting");
    const facts = seen[0].messages.flatMap((m) =>
      m.role === "user" && m.text.startsWith("[sub-agent") ? [m.text] : []
    );
    assert.deepEqual(facts, [
      `[sub-agent ${waited.agents[0].threadId}] needs_input: it waits for answers: Which colour?`,
    ]);
    const childView = await f.threads.view(waited.agents[0].threadId);
    await f.threads.respond({
      threadId: childView.threadId,
      requestKey: "answer",
      interactionId: childView.pending[0].id,
      answers: [{ questionId: "colour", value: "blue" }],
    });
    const done = await f.threads.waitForIdle(childView.threadId, { timeoutMs: 10_000 });
    assert.equal(done.items.at(-1)?.text, "Painted it blue.");
    await f.host.shutdown();
  },
);
