// Faithful or refused (DESIGN §11): a gateway's finish.state that JSON cannot
// keep as it is (a Map, a function) fails the turn `engine_contract` instead
// of being stored changed.
import { test } from "node:test";
import assert from "node:assert/strict";
import { defineAgent, type Gateway, memoryStore, openHost } from "@floret/engine";

function stateGateway(state: unknown): Gateway {
  return {
    info: { provider: "s", model: "s", stateKey: "s", capabilities: {} },
    async *stream() {
      yield { type: "text", delta: "hi" };
      yield { type: "finish", reason: "stop", state } as never;
    },
  };
}

for (
  const [name, state, ok] of [
    ["a Map", { cache: new Map([["a", 1]]) }, false],
    ["a function", { fn: () => 1 }, false],
    ["a Date", { at: new Date(0) }, false],
    ["NaN", { n: Number.NaN }, false],
    ["plain JSON", { id: "resp_1", items: [1, "two", { three: null }] }, true],
  ] as const
) {
  test(`finish.state with ${name} ${ok ? "is kept" : "fails the turn engine_contract"}`, async () => {
    const host = await openHost({ store: memoryStore() });
    const threads = host.threads({
      agent: defineAgent({
        id: "s",
        systemPrompt: "x",
        gateway: stateGateway(state),
        providerRetry: { disabled: true },
      }),
    });
    const { threadId } = await threads.create({ requestKey: "c" });
    await threads.send({ threadId, requestKey: "s", input: { text: "go" } });
    const view = await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
    const turn = view.turns.at(-1);
    if (ok) assert.equal(turn?.outcome, "completed");
    else {
      assert.equal(turn?.outcome, "failed");
      assert.equal(turn?.failure?.code, "engine_contract");
    }
    await host.shutdown();
  });
}
