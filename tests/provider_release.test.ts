// After an attempt, the engine asks the gateway's iterator to clean up
// (`return()`) without waiting for it: a cleanup that throws, rejects or never
// answers changes nothing about the turn, and leaves no unhandled rejection.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  defineAgent,
  type Gateway,
  memoryStore,
  openHost,
  type ProviderEvent,
} from "@floret/engine";

type Cleanup = "throws" | "rejects" | "hangs" | "absent";

/** A gateway whose iterator answers one text step, then cleans up as `cleanup` says. */
function gatewayWith(cleanup: Cleanup, calls: { returned: number }): Gateway {
  return {
    info: {
      provider: "test",
      model: "release",
      stateKey: "test:release",
      capabilities: { contextWindowTokens: 128_000 },
    },
    stream(): AsyncIterable<ProviderEvent> {
      const events: ProviderEvent[] = [
        { type: "text", delta: "done" },
        { type: "finish", reason: "stop" },
      ];
      let at = 0;
      const iterator: AsyncIterator<ProviderEvent> = {
        next: () =>
          Promise.resolve(
            at < events.length
              ? { done: false, value: events[at++] }
              : { done: true, value: undefined },
          ),
      };
      if (cleanup !== "absent") {
        iterator.return = () => {
          calls.returned++;
          if (cleanup === "throws") throw new Error("cleanup threw");
          if (cleanup === "rejects") return Promise.reject(new Error("cleanup rejected"));
          return new Promise<IteratorResult<ProviderEvent>>(() => {});
        };
      }
      return { [Symbol.asyncIterator]: () => iterator };
    },
  };
}

for (const cleanup of ["throws", "rejects", "hangs", "absent"] as const) {
  test(`a cleanup that ${cleanup === "absent" ? "does not exist" : cleanup} leaves the turn completed`, async () => {
    const calls = { returned: 0 };
    const store = memoryStore();
    const host = await openHost({ store });
    try {
      const threads = host.threads({
        agent: defineAgent({
          id: "release",
          systemPrompt: "s",
          gateway: gatewayWith(cleanup, calls),
        }),
      });
      const { threadId } = await threads.create({ requestKey: "c" });
      await threads.send({ threadId, requestKey: "s", input: { text: "hi" } });
      const view = await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
      assert.equal(view.status, "idle");
      assert.equal(view.turns.at(-1)?.outcome, "completed");
      assert.equal(view.items.at(-1)?.text, "done");
      assert.equal(calls.returned, cleanup === "absent" ? 0 : 1);
      // A rejected cleanup would surface as an unhandled rejection by now.
      await new Promise((resolve) => setTimeout(resolve, 10));
    } finally {
      await host.shutdown();
    }
  });
}
