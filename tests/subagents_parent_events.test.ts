// parentEvents (DESIGN.md §10): child facts reach the parent at its next
// provider request, as one user-role message each, once, in order, across a
// restart; they never start a turn and never become view items.
import { test } from "node:test";
import assert from "node:assert/strict";
import { memoryStore, openHost, type ProviderRequest } from "@floret/engine";
import { childAgent, family, toolOutputs, waitForSpawned } from "./support/subagents.ts";

const spawn = (agent: string, task: string) => ({
  name: "spawn_agent",
  arguments: { agent, task },
});

/** The texts of user messages that carry child facts. */
function facts(request: ProviderRequest): string[] {
  return request.messages.flatMap((m) =>
    m.role === "user" && m.text.startsWith("[sub-agent ") ? [m.text] : []
  );
}

test("a child's completion enters the parent's next request once, after a wait, with its report", async () => {
  const seen: ProviderRequest[] = [];
  const f = await family(
    [
      { toolCalls: [spawn("alpha", "one")] },
      waitForSpawned,
      (request) => {
        seen.push(request);
        return {
          toolCalls: [{
            name: "inspect_agent",
            arguments: {
              threadId: toolOutputs(request, "spawn_agent")[0].threadId,
            },
          }],
        };
      },
      (request) => {
        seen.push(request);
        return { text: "done" };
      },
    ],
    [childAgent("alpha")],
    { parentEvents: true },
  );
  await f.threads.send({ threadId: f.threadId, requestKey: "s1", input: { text: "go" } });
  const view = await f.threads.waitForIdle(f.threadId, { timeoutMs: 10_000 });
  const childId = toolOutputs(seen[0], "spawn_agent")[0].threadId;
  assert.deepEqual(facts(seen[0]), [
    `[sub-agent ${childId}] completed\nReport:\nalpha report on: one`,
  ]);
  assert.deepEqual(facts(seen[1]), facts(seen[0]), "admitted once, present in every later request");
  // It sits right after the wait's tool result, as a user message.
  const at = seen[0].messages.findIndex((m) =>
    m.role === "user" && m.text.startsWith("[sub-agent")
  );
  assert.equal(seen[0].messages[at - 1].role, "tool");
  assert.ok(view.items.every((item) => !item.text?.startsWith("[sub-agent")), "no view item");
  await f.host.shutdown();
});

test("facts wait for the next turn, never start one, and survive a restart without repeating", async () => {
  // Shutdown closes the store; this one outlives each host, like a file would.
  const inner = memoryStore();
  const store = { ...inner, close: () => Promise.resolve() };
  const f = await family(
    [{ toolCalls: [spawn("slow", "a"), spawn("fails", "b")] }, { text: "started them" }],
    [
      // Both end after the parent's turn has ended; the failure well before the completion.
      childAgent("slow", () => ({ text: "slow result", delayMs: 400 })),
      childAgent("fails", () => ({ error: { retry: "never", message: "boom" }, delayMs: 100 })),
    ],
    { parentEvents: true },
    store,
  );
  await f.threads.send({ threadId: f.threadId, requestKey: "s1", input: { text: "go" } });
  await f.threads.waitForIdle(f.threadId, { timeoutMs: 10_000 });
  const children = (await f.threads.list({ parentThreadId: f.threadId })).threads;
  assert.equal(children.length, 2);
  for (const child of children) await f.threads.waitForIdle(child.threadId, { timeoutMs: 10_000 });
  // Give any wrongly started turn a moment to show itself.
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.equal((await f.threads.view(f.threadId)).turns.length, 1, "no turn started by a fact");
  await f.host.shutdown();

  // A new host on the same store: the next turn's first request carries both facts.
  const { scriptedGateway } = await import("@floret/engine/testing");
  const { defineAgent } = await import("@floret/engine");
  const gateway = scriptedGateway([{ text: "noted" }, { text: "again" }]);
  const parent = defineAgent({
    id: "lead",
    systemPrompt: "You lead.",
    gateway,
    subagents: [childAgent("slow"), childAgent("fails")],
    parentEvents: true,
  });
  const host = await openHost({ store: f.store });
  const threads = host.threads({ agent: parent });
  await threads.send({ threadId: f.threadId, requestKey: "s2", input: { text: "status?" } });
  await threads.waitForIdle(f.threadId, { timeoutMs: 10_000 });
  const first = facts(gateway.requests[0]);
  assert.equal(first.length, 2);
  // In the order they happened: the failure came first.
  assert.match(first[0], /\] failed \(provider_error\)$/);
  assert.match(first[1], /\] completed\nReport:\nslow result$/);
  const lastUser = gateway.requests[0].messages.filter((m) => m.role === "user");
  assert.equal(lastUser.at(-3)?.text, "status?", "facts follow the turn's user message");
  await host.shutdown();

  const again = await openHost({ store: f.store });
  const more = again.threads({ agent: parent });
  await more.send({ threadId: f.threadId, requestKey: "s3", input: { text: "and now?" } });
  await more.waitForIdle(f.threadId, { timeoutMs: 10_000 });
  assert.deepEqual(facts(gateway.requests[1]), first, "each fact once, after a restart too");
  await again.shutdown();
});

test("a cancelled child is a fact; without parentEvents the parent gets none", async () => {
  for (const parentEvents of [true, false]) {
    const seen: ProviderRequest[] = [];
    const f = await family(
      [
        { toolCalls: [spawn("slow", "x")] },
        (request) => ({
          toolCalls: [{
            name: "cancel_agent",
            arguments: {
              threadId: toolOutputs(request, "spawn_agent")[0].threadId,
            },
          }],
        }),
        (request) => {
          seen.push(request);
          return { text: "ok" };
        },
      ],
      [childAgent("slow", () => ({ hang: true }))],
      { parentEvents },
    );
    await f.threads.send({ threadId: f.threadId, requestKey: "s1", input: { text: "go" } });
    await f.threads.waitForIdle(f.threadId, { timeoutMs: 10_000 });
    const got = facts(seen[0]);
    if (parentEvents) {
      assert.equal(got.length, 1);
      assert.match(got[0], /\] cancelled$/);
    } else {
      assert.deepEqual(got, []);
    }
    await f.host.shutdown();
  }
});
