// Secrets inside child threads (issue #9, DESIGN §8 secrets, §10 sub-agents):
// a child is an ordinary thread, so its secret question is answered with
// `respond` on the child; the secret reaches only the child's resumed run,
// never a store, an event or the parent; after a restart that cut the resumed
// run the child asks again. A spawn's `title` is the child's title.
import { test } from "node:test";
import assert from "node:assert/strict";
import { defineAgent, type KvStore, memoryStore, openHost } from "@floret/engine";
import { scriptedGateway, type ScriptStep } from "@floret/engine/testing";
import { contains, isCode, keepOpen, writeTool } from "./support/interactions.ts";
import { waitForSpawned } from "./support/subagents.ts";

const SECRET = "child-secret-Vv81";

const askToken: ScriptStep = {
  toolCalls: [{
    name: "ask_user",
    arguments: { questions: [{ id: "token", prompt: "API token?", secret: true }] },
  }],
};

/** A host whose root agent spawns one `vault` child and waits for it. */
async function openFamily(store: KvStore, childSteps: ScriptStep[], events: string[]) {
  const childGateway = scriptedGateway(childSteps);
  const child = defineAgent({
    id: "vault",
    systemPrompt: "You open the vault.",
    gateway: childGateway,
    providerRetry: { delaysMs: [1] },
  });
  const parentGateway = scriptedGateway([
    {
      toolCalls: [{
        name: "spawn_agent",
        arguments: { agent: "vault", task: "open it", title: "Vault opener" },
      }],
    },
    waitForSpawned,
    { text: "the child is waiting" },
    { text: "parent later" },
  ]);
  const host = await openHost({
    store: keepOpen(store),
    onEvent: (event) => events.push(JSON.stringify(event)),
  });
  const threads = host.threads({
    agent: defineAgent({
      id: "lead",
      systemPrompt: "You lead.",
      gateway: parentGateway,
      providerRetry: { delaysMs: [1] },
      subagents: [child],
    }),
  });
  return { host, threads, childGateway, parentGateway };
}

async function noSecretIn(store: KvStore): Promise<void> {
  const needle = new TextEncoder().encode(SECRET);
  const rows = await store.list({ prefix: [] });
  assert.ok(rows.length > 0);
  assert.equal(
    rows.filter((row) => contains(row.value, needle)).length,
    0,
    "no stored value holds it",
  );
}

test("a child's secret reaches only the child's resumed run; stores, events and the parent never see it", async () => {
  const store = memoryStore();
  const events: string[] = [];
  const f = await openFamily(store, [askToken, { text: "vault open" }], events);
  const { threadId } = await f.threads.create({ requestKey: "c" });
  await f.threads.send({ threadId, requestKey: "s", input: { text: "go" } });
  await f.threads.waitForIdle(threadId, { timeoutMs: 10_000 });
  const { threads: children } = await f.threads.list({ parentThreadId: threadId });
  assert.equal(children.length, 1);
  const childId = children[0].threadId;
  assert.equal(children[0].title, "Vault opener", "the spawn's title is the child's title");
  const waiting = await f.threads.waitForIdle(childId, { timeoutMs: 10_000 });
  assert.equal(waiting.status, "waiting");
  assert.equal(waiting.title, "Vault opener");
  assert.equal(waiting.titleStatus, "ready", "a host title, as at create");
  assert.equal(waiting.titleGeneration, 1);
  const question = waiting.pending[0];
  assert.equal(question.kind, "input");
  await assert.rejects(
    f.threads.respond({
      threadId,
      requestKey: "wrong-thread",
      interactionId: question.id,
      answers: [{ questionId: "token", value: SECRET }],
    }),
    isCode("interaction_not_found"),
    "the parent does not own the child's question",
  );
  const answered = await f.threads.respond({
    threadId: childId,
    requestKey: "r",
    interactionId: question.id,
    answers: [{ questionId: "token", value: SECRET }],
  });
  assert.equal(answered.view.status, "running");
  const done = await f.threads.waitForIdle(childId, { timeoutMs: 10_000 });
  assert.equal(done.status, "idle");
  assert.equal(done.turns.at(-1)?.outcome, "completed");
  assert.ok(
    JSON.stringify(f.childGateway.requests[1]).includes(SECRET),
    "the resumed run sends it",
  );
  assert.ok(!JSON.stringify(done).includes(SECRET), "the child's view never shows it");
  const history = await f.threads.history(childId);
  assert.ok(!JSON.stringify(history).includes(SECRET));
  assert.ok(!f.parentGateway.requests.some((r) => JSON.stringify(r).includes(SECRET)));
  assert.ok(!events.some((event) => event.includes(SECRET)), "events never carry it");
  await noSecretIn(store);
  await f.host.shutdown();
});

test("a child's resumed run cut by a restart asks the secret again, as a new pending interaction", async () => {
  const store = memoryStore();
  const events: string[] = [];
  let f = await openFamily(store, [askToken, { hang: true } as ScriptStep], events);
  const { threadId } = await f.threads.create({ requestKey: "c" });
  await f.threads.send({ threadId, requestKey: "s", input: { text: "go" } });
  await f.threads.waitForIdle(threadId, { timeoutMs: 10_000 });
  const childId = (await f.threads.list({ parentThreadId: threadId })).threads[0].threadId;
  const waiting = await f.threads.waitForIdle(childId, { timeoutMs: 10_000 });
  const firstId = waiting.pending[0].id;
  await f.threads.respond({
    threadId: childId,
    requestKey: "r",
    interactionId: firstId,
    answers: [{ questionId: "token", value: SECRET }],
  });
  for (let i = 0; i < 5000 && f.childGateway.requests.length < 2; i++) {
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  assert.ok(JSON.stringify(f.childGateway.requests[1]).includes(SECRET));
  await f.host.shutdown();

  f = await openFamily(store, [{ text: "vault open" }], events);
  const again = await f.threads.view(childId);
  assert.equal(again.status, "waiting", "asked again");
  assert.equal(again.pending.length, 1);
  assert.notEqual(again.pending[0].id, firstId);
  assert.deepEqual(again.pending[0].questions?.map((q) => [q.id, q.secret]), [["token", true]]);
  await f.threads.respond({
    threadId: childId,
    requestKey: "r2",
    interactionId: again.pending[0].id,
    answers: [{ questionId: "token", value: SECRET }],
  });
  const done = await f.threads.waitForIdle(childId, { timeoutMs: 10_000 });
  assert.equal(done.status, "idle");
  assert.ok(JSON.stringify(f.childGateway.requests[0]).includes(SECRET));
  assert.ok(!events.some((event) => event.includes(SECRET)));
  await noSecretIn(store);
  await f.host.shutdown();
});

test("cancel with includeDescendants releases a child's pending approval as cancelled; nothing runs", async () => {
  const ran: string[] = [];
  const childGateway = scriptedGateway([
    { toolCalls: [{ name: "write", arguments: { line: "w" } }] },
    { text: "never" },
  ]);
  const child = defineAgent({
    id: "writer",
    systemPrompt: "You write.",
    gateway: childGateway,
    tools: [writeTool(ran)],
    providerRetry: { delaysMs: [1] },
  });
  const host = await openHost({ store: memoryStore() });
  const threads = host.threads({
    agent: defineAgent({
      id: "lead",
      systemPrompt: "You lead.",
      gateway: scriptedGateway([
        { toolCalls: [{ name: "spawn_agent", arguments: { agent: "writer", task: "write" } }] },
        { hang: true } as ScriptStep,
      ]),
      providerRetry: { delaysMs: [1] },
      subagents: [child],
    }),
  });
  const { threadId } = await threads.create({ requestKey: "c" });
  await threads.send({ threadId, requestKey: "s", input: { text: "go" } });
  let childId: string | undefined;
  for (let i = 0; i < 10_000 && !childId; i++) {
    childId = (await threads.list({ parentThreadId: threadId })).threads[0]?.threadId;
    if (!childId) await new Promise((resolve) => setTimeout(resolve, 5));
  }
  assert.ok(childId);
  const waiting = await threads.waitForIdle(childId, { timeoutMs: 10_000 });
  assert.equal(waiting.status, "waiting");
  const { view } = await threads.cancel({ threadId, requestKey: "x", includeDescendants: true });
  assert.notEqual(view.status, "running");
  const stopped = await threads.view(childId);
  assert.equal(stopped.status, "idle", "the child's stop is committed when cancel returns");
  assert.deepEqual(stopped.pending, []);
  assert.equal(stopped.turns.at(-1)?.outcome, "cancelled");
  await assert.rejects(
    threads.respond({
      threadId: childId,
      requestKey: "late",
      interactionId: waiting.pending[0].id,
      decision: "approve",
    }),
    isCode("request_conflict"),
  );
  assert.deepEqual(ran, []);
  assert.equal(childGateway.requests.length, 1);
  await host.shutdown();
});
