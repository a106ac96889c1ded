// Audit (round 11): the subscriber limits (DESIGN §7: "per subscriber at most
// 64 pending batches / 1 MiB, beyond which it gets resync"). The limit is on
// what is pending: a reader that keeps up — never more than a batch or two
// behind — through a turn whose tool outputs add up to well over 1 MiB must
// not get `resync`; a reader that reads nothing meanwhile still does.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import { defineAgent, defineTool, memoryStore, openHost, type ThreadView } from "@floret/engine";
import { scriptedGateway } from "@floret/engine/testing";
import { Observer, stateOf } from "./support/audit_observer.ts";

const STEPS = 14;
const OUTPUT = 40_000; // characters per tool output: 14 of them are well over 1 MiB of text

async function setUp() {
  const gates = Array.from({ length: STEPS }, () => {
    let enter!: () => void;
    let open!: () => void;
    const entered = new Promise<void>((resolve) => (enter = resolve));
    const opened = new Promise<void>((resolve) => (open = resolve));
    return { entered, enter, opened, open };
  });
  const big = defineTool({
    name: "big",
    description: "A large output, when the test says so",
    input: z.object({ n: z.number() }),
    execute: async ({ n }) => {
      gates[n]!.enter();
      await gates[n]!.opened;
      return `${n}:` + "x".repeat(OUTPUT);
    },
  });
  const steps = Array.from({ length: STEPS }, (_, n) => ({
    toolCalls: [{ name: "big", arguments: { n } }],
  }));
  const host = await openHost({ store: memoryStore() });
  const threads = host.threads({
    agent: defineAgent({
      id: "backlog",
      systemPrompt: "B.",
      gateway: scriptedGateway([...steps, { text: "done" }]),
      tools: [big],
      maxSteps: STEPS + 5,
      // Room for every output, so no compaction (whose summary request would take a scripted step).
      context: { windowTokens: 2_000_000 },
    }),
  });
  const { threadId } = await threads.create({ requestKey: "create" });
  return { host, threads, threadId, gates };
}

const completed = (view: ThreadView) =>
  view.items.filter((item) => item.tool?.status === "completed").length;

describe("subscriber limits count what is pending", () => {
  test("a reader one batch behind through more than 1 MiB of output gets no resync", async () => {
    const { host, threads, threadId, gates } = await setUp();
    const observer = await Observer.join(threads, threadId);
    await threads.send({ threadId, requestKey: "s", input: { text: "go" } });
    for (let n = 0; n < STEPS; n++) {
      await gates[n]!.entered;
      gates[n]!.open();
      let view = await threads.view(threadId);
      while (completed(view) <= n) {
        await new Promise((resolve) => setTimeout(resolve, 1));
        view = await threads.view(threadId);
      }
      // Keep up, leaving the newest batch unread: never more than one batch pending here.
      await observer.until(view.viewVersion - 1);
      assert.equal(observer.resyncs, 0, `step ${n}: no resync for a reader that keeps up`);
    }
    const final = await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
    await observer.reach(final);
    assert.equal(observer.resyncs, 0);
    assert.deepEqual(observer.problems, []);
    assert.deepEqual(stateOf(observer.local), stateOf(final));
    assert.equal(completed(final), STEPS);
    await observer.leave();
    await host.shutdown();
  });

  test("a reader that reads nothing through the same turn gets resync; one that keeps up beside it does not", async () => {
    const { host, threads, threadId, gates } = await setUp();
    const updates = threads.subscribe(threadId)[Symbol.asyncIterator]();
    await threads.view(threadId);
    const steady = await Observer.join(threads, threadId);
    await threads.send({ threadId, requestKey: "s", input: { text: "go" } });
    for (const gate of gates) {
      await gate.entered;
      gate.open();
      await steady.until((await threads.view(threadId)).viewVersion);
    }
    const final = await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
    const first = await updates.next();
    assert.deepEqual(first.value, { type: "resync", reason: "subscriber fell behind" });
    await steady.reach(final);
    assert.equal(steady.resyncs, 0, "the other subscriber's backlog is not this one's");
    assert.deepEqual(stateOf(steady.local), stateOf(final));
    await steady.leave();
    await updates.return?.();
    await host.shutdown();
  });
});
