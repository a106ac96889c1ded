/**
 * A host opened with `{ agentFactory }`: a restarted host shows the context
 * figures the live host showed (window and estimate of the next request)
 * before any turn runs there, in `view().context` and in `context()`; a
 * factory that throws leaves the figures out of the view and fails nothing.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { type Agent, defineAgent, memoryStore, openHost } from "@floret/engine";
import { scriptedGateway } from "@floret/engine/testing";
import { keepOpen } from "./support/audit_store.ts";

const agent = (windowTokens: number): Agent =>
  defineAgent({
    id: `factory-${windowTokens}`,
    systemPrompt: "You answer briefly.",
    gateway: scriptedGateway([{ text: "first answer" }]),
    context: { windowTokens },
  });

describe("store audit: context figures on a factory host after a restart", () => {
  test("the restarted host shows the live figures before any turn runs", async () => {
    const store = keepOpen(memoryStore());
    const asked: string[] = [];
    const factory = (request: { threadId: string; turnId: string }) => {
      asked.push(request.turnId);
      return agent(64_000);
    };
    const first = await openHost({ store });
    const live = first.threads({ agentFactory: factory });
    const { threadId } = await live.create({ requestKey: "c" });
    await live.send({ threadId, requestKey: "s", input: { text: "hello there" } });
    const liveView = await live.waitForIdle(threadId);
    const liveFigures = await live.context(threadId);
    assert.equal(liveView.context?.windowTokens, 64_000);
    assert.equal(liveFigures.windowTokens, 64_000);
    assert.ok(liveFigures.estimateTokens > 0);
    await first.shutdown();

    const second = await openHost({ store });
    try {
      const again = second.threads({ agentFactory: factory });
      const figures = await again.context(threadId);
      assert.equal(figures.windowTokens, 64_000);
      assert.equal(figures.estimateTokens, liveFigures.estimateTokens);
      const view = await again.view(threadId);
      assert.deepEqual(view.context, liveView.context);
      // Asked for the thread's last turn, as that turn was.
      assert.equal(asked.at(-1), liveView.turns.at(-1)?.turnId);
    } finally {
      await second.shutdown();
    }
  });

  test("a factory that throws leaves the view without figures and fails no read", async () => {
    const store = keepOpen(memoryStore());
    const first = await openHost({ store });
    const live = first.threads({ agentFactory: () => agent(32_000) });
    const { threadId } = await live.create({ requestKey: "c" });
    await live.send({ threadId, requestKey: "s", input: { text: "hello" } });
    await live.waitForIdle(threadId);
    await first.shutdown();

    const second = await openHost({ store });
    try {
      const again = second.threads({
        agentFactory: () => {
          throw new Error("the host's factory is broken");
        },
      });
      const view = await again.view(threadId);
      assert.equal(view.status, "idle");
      assert.equal(view.context, undefined);
      assert.equal((await again.context(threadId)).windowTokens, 0);
    } finally {
      await second.shutdown();
    }
  });
});
