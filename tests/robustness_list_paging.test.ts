/**
 * Issue 28: paging `list()` while threads are being updated visits every
 * thread exactly once. The list orders by most recent update, so a thread
 * that gets a new turn moves to the front; a cursor that kept its place by
 * the moving key skipped the threads that moved past it (22 of 40).
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { defineAgent, memoryStore, openHost, type ThreadService } from "@floret/engine";
import { scriptedGateway } from "@floret/engine/testing";
import { TIMEOUT, watchdog } from "./support/robust.ts";

const THREADS = 40;

async function turn(threads: ThreadService, threadId: string, text: string): Promise<void> {
  await threads.send({ threadId, requestKey: text, input: { text } });
  await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
}

/** Paces updates so each gets its own millisecond (the index orders by ms). */
const tick = () => new Promise((resolve) => setTimeout(resolve, 2));

describe("robustness: list pages while threads are updated", () => {
  test(
    "each thread is visited exactly once, in the order of the listing's start",
    TIMEOUT,
    async () => {
      await watchdog(50_000, async () => {
        const host = await openHost({ store: memoryStore() });
        const threads = host.threads({
          agent: defineAgent({
            id: "a",
            systemPrompt: "s",
            gateway: scriptedGateway(Array.from({ length: 200 }, () => ({ text: "ok" }))),
          }),
        });
        const ids: string[] = [];
        for (let i = 0; i < THREADS; i++) {
          const { threadId } = await threads.create({ requestKey: `c${i}` });
          await turn(threads, threadId, `first ${i}`);
          ids.push(threadId);
          await tick();
        }
        const seen: string[] = [];
        let cursor: string | undefined;
        let pages = 0;
        do {
          const page = await threads.list({ limit: 3, cursor });
          seen.push(...page.threads.map((thread) => thread.threadId));
          cursor = page.cursor;
          // Threads not listed yet get a new turn: each moves to the front of the order.
          const unseen = ids.filter((id) => !seen.includes(id));
          for (const id of unseen.slice(-2)) {
            await turn(threads, id, `more ${id} ${pages}`);
            await tick();
          }
          // And one already listed moves too: it must not come again.
          if (seen.length > 0) await turn(threads, seen[0], `again ${pages}`);
          pages++;
        } while (cursor && pages < 100);
        assert.equal(new Set(seen).size, seen.length, "no thread listed twice");
        assert.deepEqual([...seen].sort(), [...ids].sort(), "every thread listed");
        // The order is the one the listing started from: most recently updated first.
        assert.deepEqual(seen, [...ids].reverse());
        await host.shutdown();
      });
    },
  );

  test("a cursor that is not one of ours is invalid_input", TIMEOUT, async () => {
    const host = await openHost({ store: memoryStore() });
    const threads = host.threads({
      agent: defineAgent({ id: "a", systemPrompt: "s", gateway: scriptedGateway([]) }),
    });
    await assert.rejects(threads.list({ cursor: "nonsense" }), { code: "invalid_input" });
    await host.shutdown();
  });
});
