/**
 * Issue 29, deterministic tests: `openHost({ ids, clock })` with
 * `sequentialIds(prefix)` and `manualClock(start)` from the testing entry
 * make ids and stored times the same on every run.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { defineAgent, memoryStore, openHost, type ThreadView } from "@floret/engine";
import { manualClock, scriptedGateway, sequentialIds } from "@floret/engine/testing";
import { addTool } from "./support/engine.ts";

async function scenario(): Promise<{ threadId: string; view: ThreadView }> {
  const clock = manualClock("2026-01-01T00:00:00.000Z");
  const host = await openHost({ store: memoryStore(), ids: sequentialIds("t"), clock });
  const threads = host.threads({
    agent: defineAgent({
      id: "a",
      systemPrompt: "s",
      gateway: scriptedGateway([
        { toolCalls: [{ name: "add", arguments: { a: 1, b: 2 }, callId: "c1" }] },
        { text: "3" },
      ]),
      tools: [addTool()],
    }),
  });
  const { threadId } = await threads.create({ requestKey: "c" });
  clock.advance(1_000);
  await threads.send({ threadId, requestKey: "s", input: { text: "1+2?" } });
  await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
  const view = await threads.view(threadId);
  await host.shutdown();
  return { threadId, view };
}

test("ids and times repeat exactly from one run to the next", async () => {
  const first = await scenario();
  const second = await scenario();
  assert.equal(first.threadId, "t-000001");
  assert.equal(first.view.turns[0].turnId, second.view.turns[0].turnId);
  assert.match(first.view.turns[0].turnId, /^t-\d{6}$/);
  assert.equal(first.view.turns[0].startedAt, "2026-01-01T00:00:01.000Z");
  assert.deepEqual(
    first.view.items.map((item) => [item.id, item.createdAt]),
    second.view.items.map((item) => [item.id, item.createdAt]),
  );
  assert.equal(JSON.stringify(first.view), JSON.stringify(second.view));
});

test("after shutdown the engine's own ids and clock come back", async () => {
  await scenario();
  const host = await openHost({ store: memoryStore() });
  const threads = host.threads({
    agent: defineAgent({ id: "a", systemPrompt: "s", gateway: scriptedGateway([]) }),
  });
  const { threadId } = await threads.create({ requestKey: "c" });
  assert.match(threadId, /^thread_/);
  await host.shutdown();
});

test("sequentialIds and manualClock", () => {
  const ids = sequentialIds("x");
  assert.deepEqual([ids(), ids()], ["x-000001", "x-000002"]);
  assert.equal(sequentialIds()(), "id-000001");
  const clock = manualClock("2026-05-01T10:00:00.000Z");
  clock.advance(250);
  assert.equal(new Date(clock.now()).toISOString(), "2026-05-01T10:00:00.250Z");
  assert.throws(() => manualClock("not a time"));
  assert.throws(() => clock.advance(-1));
});
