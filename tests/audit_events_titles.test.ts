// Audit (round 11): publications made outside a turn's commits — a provider
// title that arrives after the turn, with nobody listening before the join —
// and a host whose agent comes from an `agentFactory` (the view's context
// figures appear only once a run names the agent). A lone observer that joins
// late must still end with the view, title state and context included.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { defineAgent, memoryStore, openHost, type ThreadView } from "@floret/engine";
import { scriptedGateway } from "@floret/engine/testing";
import { titleGateway } from "./support/title_gateway.ts";
import { Observer, stateOf } from "./support/audit_observer.ts";

describe("late observers and publications outside the turn", () => {
  test("a provider title that arrives after the turn reaches an observer that joined while it was pending", async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const gateway = titleGateway([{ text: "the answer" }], {
      text: "A Fine Title",
      release: released,
    });
    const host = await openHost({ store: memoryStore() });
    const threads = host.threads({
      agent: defineAgent({ id: "titled", systemPrompt: "T.", gateway, titles: "provider" }),
    });
    const { threadId } = await threads.create({ requestKey: "create" });
    await threads.send({ threadId, requestKey: "s", input: { text: "first message here" } });
    await gateway.titleStarted;
    const idle = await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
    assert.equal(idle.titleStatus, "pending");
    const observer = await Observer.join(threads, threadId);
    release();
    let view: ThreadView = idle;
    for (let i = 0; i < 10_000 && view.titleStatus !== "ready"; i++) {
      await new Promise((resolve) => setTimeout(resolve, 2));
      view = await threads.view(threadId);
    }
    assert.equal(view.title, "A Fine Title");
    await observer.reach(view);
    assert.deepEqual(observer.problems, []);
    assert.deepEqual(stateOf(observer.local), stateOf(view));
    assert.equal(observer.local.titleStatus, "ready");
    await observer.leave();
    await host.shutdown();
  });

  test("with an agentFactory, an observer from before the send ends with the view's context figures", async () => {
    const agent = defineAgent({
      id: "made",
      systemPrompt: "Made by a factory.",
      gateway: scriptedGateway([{
        text: "made answer",
        usage: { inputTokens: 7, outputTokens: 2 },
      }]),
    });
    const host = await openHost({ store: memoryStore() });
    const threads = host.threads({ agentFactory: () => agent });
    const { threadId } = await threads.create({ requestKey: "create" });
    const observer = await Observer.join(threads, threadId);
    await threads.send({ threadId, requestKey: "s", input: { text: "go" } });
    const final = await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
    assert.ok(final.context, "the view knows the agent's context once it ran");
    await observer.reach(final);
    assert.deepEqual(observer.problems, []);
    assert.deepEqual(stateOf(observer.local), stateOf(final));
    await observer.leave();
    await host.shutdown();
  });
});
