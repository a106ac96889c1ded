/**
 * Issue 28, "reads are never cached wrong": a store read that contradicts what
 * the host knows (an empty or short journal page for a record that says more
 * entries exist) is read again, then refused with `storage_failure`; it never
 * becomes the thread's state in memory, so the view keeps every item and the
 * next provider request carries the whole conversation.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import {
  defineAgent,
  type KvEntry,
  type KvListOptions,
  type KvSelector,
  type KvStore,
  memoryStore,
  openHost,
} from "@floret/engine";
import { scriptedGateway } from "@floret/engine/testing";
import { rejectsWith, TIMEOUT, watchdog } from "./support/robust.ts";

/** How a journal page read goes wrong. */
type ShortRead = "empty" | "short";

/**
 * A store whose next `failures` forward list calls over journal entries
 * answer an empty page or only its first half; every other call passes through.
 */
function shortReads(inner: KvStore) {
  const state = { failures: 0, kind: "empty" as ShortRead, served: 0 };
  const isEntries = (selector: KvSelector): boolean =>
    ("prefix" in selector ? selector.prefix[0] : selector.start[0]) === "entry";
  const store: KvStore = {
    getMany: (keys) => inner.getMany(keys),
    commit: (op) => inner.commit(op),
    // The first host's shutdown must not close the store the second host reads.
    close: () => Promise.resolve(),
    async list(selector: KvSelector, options?: KvListOptions): Promise<KvEntry[]> {
      const rows = await inner.list(selector, options);
      // Forward pages only: the one-row reverse read of the last entry stays true here.
      if (state.failures === 0 || !isEntries(selector) || options?.reverse) return rows;
      if (rows.length === 0) return rows;
      state.failures--;
      state.served++;
      return state.kind === "empty" ? [] : rows.slice(0, Math.floor(rows.length / 2));
    },
  };
  return { store, state };
}

/** A thread with two finished turns, written by a first host that then stops. */
async function twoTurns(store: KvStore) {
  const first = await openHost({ store });
  const threads = first.threads({
    agent: defineAgent({
      id: "a",
      systemPrompt: "s",
      gateway: scriptedGateway([{ text: "answer one" }, { text: "answer two" }]),
    }),
  });
  const { threadId } = await threads.create({ requestKey: "c" });
  for (const text of ["question one", "question two"]) {
    await threads.send({ threadId, requestKey: text, input: { text } });
    await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
  }
  const items = (await threads.view(threadId)).items.length;
  await first.shutdown();
  return { threadId, items };
}

for (const kind of ["empty", "short"] as const) {
  describe(`robustness: a ${kind} journal page while a thread loads`, () => {
    test(
      "is read again: the view keeps every item and the next request the conversation",
      TIMEOUT,
      async () => {
        await watchdog(20_000, async () => {
          const { store, state } = shortReads(memoryStore());
          const { threadId, items } = await twoTurns(store);
          assert.equal(items, 4);
          const gateway = scriptedGateway([{ text: "answer three" }]);
          const second = await openHost({ store });
          const threads = second.threads({
            agent: defineAgent({ id: "a", systemPrompt: "s", gateway }),
          });
          state.kind = kind;
          state.failures = 1;
          const view = await threads.view(threadId);
          assert.equal(state.served, 1, "the faulty page was served");
          assert.equal(view.items.length, 4);
          await threads.send({ threadId, requestKey: "three", input: { text: "question three" } });
          const after = await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
          assert.equal(after.items.length, 6);
          const texts = JSON.stringify(gateway.requests[0].messages);
          for (const text of ["question one", "answer one", "question two", "answer two"]) {
            assert.ok(texts.includes(text), `the request carries "${text}"`);
          }
          await second.shutdown();
        });
      },
    );

    test("that never heals is storage_failure and loads nothing", TIMEOUT, async () => {
      await watchdog(20_000, async () => {
        const { store, state } = shortReads(memoryStore());
        const { threadId } = await twoTurns(store);
        const second = await openHost({ store });
        const threads = second.threads({
          agent: defineAgent({
            id: "a",
            systemPrompt: "s",
            gateway: scriptedGateway([{ text: "answer three" }]),
          }),
        });
        state.kind = kind;
        state.failures = 1_000;
        await rejectsWith(threads.view(threadId), "storage_failure");
        await rejectsWith(
          threads.send({ threadId, requestKey: "three", input: { text: "question three" } }),
          "storage_failure",
        );
        // Once the store answers whole again, nothing was cached from the bad reads.
        state.failures = 0;
        assert.equal((await threads.view(threadId)).items.length, 4);
        await second.shutdown();
      });
    });
  });
}
