// Audit (round 11): observing threads made in other ways than `create` — a
// fork (a thread with a base path), a child thread started by `spawn_agent` —
// and a steer joining a running turn. A lone observer that joins late ends
// with the thread's view; the fork's own turn changes nothing its source's
// observer holds.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import { defineAgent, defineTool, memoryStore, openHost } from "@floret/engine";
import { type DynamicStep, scriptedGateway } from "@floret/engine/testing";
import { Observer, stateOf } from "./support/audit_observer.ts";

function gateTool() {
  let entered!: () => void;
  let open!: () => void;
  const started = new Promise<void>((resolve) => (entered = resolve));
  const opened = new Promise<void>((resolve) => (open = resolve));
  const tool = defineTool({
    name: "gate",
    description: "Waits for the test",
    input: z.object({}),
    execute: async () => {
      entered();
      await opened;
      return "gate open";
    },
  });
  return { tool, started, open };
}

describe("observing forks, children and steers", () => {
  test("a fork observed from its creation; its source's observer sees nothing of the fork's turn", async () => {
    const host = await openHost({ store: memoryStore() });
    const threads = host.threads({
      agent: defineAgent({
        id: "forks",
        systemPrompt: "F.",
        gateway: scriptedGateway([{ text: "source answer" }, { text: "fork answer" }]),
      }),
    });
    const { threadId: source } = await threads.create({ requestKey: "create" });
    await threads.send({ threadId: source, requestKey: "s", input: { text: "one" } });
    await threads.waitForIdle(source, { timeoutMs: 10_000 });
    const sourceObserver = await Observer.join(threads, source);
    const { threadId: fork } = await threads.fork({ threadId: source, requestKey: "fork" });
    const forkObserver = await Observer.join(threads, fork);
    await threads.send({ threadId: fork, requestKey: "s", input: { text: "two" } });
    const forked = await threads.waitForIdle(fork, { timeoutMs: 10_000 });
    await forkObserver.reach(forked);
    assert.deepEqual(forkObserver.problems, []);
    assert.deepEqual(stateOf(forkObserver.local), stateOf(forked));
    assert.deepEqual(forked.items.map((item) => item.text), [
      "one",
      "source answer",
      "two",
      "fork answer",
    ]);
    const sourceView = await threads.view(source);
    await sourceObserver.reach(sourceView);
    assert.deepEqual(stateOf(sourceObserver.local), stateOf(sourceView));
    assert.equal(sourceView.items.length, 2);
    await forkObserver.leave();
    await sourceObserver.leave();
    await host.shutdown();
  });

  test("a steer while a tool runs reaches a lone observer that joined during the tool", async () => {
    const gate = gateTool();
    const host = await openHost({ store: memoryStore() });
    const threads = host.threads({
      agent: defineAgent({
        id: "steers",
        systemPrompt: "S.",
        gateway: scriptedGateway([
          { toolCalls: [{ name: "gate", arguments: {} }] },
          { text: "steered answer" },
        ]),
        tools: [gate.tool],
      }),
    });
    const { threadId } = await threads.create({ requestKey: "create" });
    await threads.send({ threadId, requestKey: "s", input: { text: "go" } });
    await gate.started;
    const observer = await Observer.join(threads, threadId);
    await threads.steer({ threadId, requestKey: "steer", text: "make it short" });
    gate.open();
    const final = await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
    await observer.reach(final);
    assert.deepEqual(observer.problems, []);
    assert.deepEqual(stateOf(observer.local), stateOf(final));
    assert.ok(final.items.some((item) => item.kind === "user" && item.text === "make it short"));
    await observer.leave();
    await host.shutdown();
  });

  test("a child thread observed while it runs ends with its view", async () => {
    const gate = gateTool();
    const kid = defineAgent({
      id: "kid",
      systemPrompt: "Kid.",
      gateway: scriptedGateway([
        { toolCalls: [{ name: "gate", arguments: {} }] },
        { text: "kid report" },
      ]),
      tools: [gate.tool],
    });
    const spawned: DynamicStep = (request) => {
      const ids = request.messages.flatMap((m) =>
        m.role === "tool" && m.name === "spawn_agent" ? [JSON.parse(m.output).threadId] : []
      );
      return { toolCalls: [{ name: "wait_agents", arguments: { threadIds: ids } }] };
    };
    const host = await openHost({ store: memoryStore() });
    const threads = host.threads({
      agent: defineAgent({
        id: "parent",
        systemPrompt: "Parent.",
        gateway: scriptedGateway([
          { toolCalls: [{ name: "spawn_agent", arguments: { agent: "kid", task: "work" } }] },
          spawned,
          { text: "parent done" },
        ]),
        subagents: [kid],
      }),
    });
    const { threadId } = await threads.create({ requestKey: "create" });
    await threads.send({ threadId, requestKey: "s", input: { text: "delegate" } });
    await gate.started;
    const { threads: children } = await threads.list({ parentThreadId: threadId });
    assert.equal(children.length, 1);
    const child = children[0]!.threadId;
    const observer = await Observer.join(threads, child);
    assert.equal(observer.local.status, "running");
    gate.open();
    await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
    const final = await threads.waitForIdle(child, { timeoutMs: 10_000 });
    await observer.reach(final);
    assert.deepEqual(observer.problems, []);
    assert.deepEqual(stateOf(observer.local), stateOf(final));
    assert.equal(final.items.at(-1)?.text, "kid report");
    await observer.leave();
    await host.shutdown();
  });
});
