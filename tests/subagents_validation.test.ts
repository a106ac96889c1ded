// The sub-agent inputs under the robust validation layer: defineAgent's
// subagents, parentEvents and subagentLimits, list's parentThreadId and
// cancel's includeDescendants are checked like every other public input, and
// a parent with child facts and its child read back from the store intact.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { defineAgent, memoryStore, openHost } from "@floret/engine";
import { scriptedGateway } from "@floret/engine/testing";
import { rejectsWith } from "./support/robust.ts";
import { childAgent, family, settleAll, waitForSpawned } from "./support/subagents.ts";

// deno-lint-ignore no-explicit-any
type Loose = any;
const gateway = () => scriptedGateway([{ text: "hi" }]);

describe("sub-agent inputs are validated", () => {
  test("defineAgent refuses wrong subagents, parentEvents and subagentLimits", async () => {
    const worker = childAgent("worker");
    const bad: Loose[] = [
      { subagents: "worker" },
      { subagents: [null] },
      { subagents: [{ id: "fake", tools: new Map() }] },
      { parentEvents: "yes" },
      { parentEvents: null },
      { subagentLimits: null },
      { subagentLimits: { maxDepth: 0 } },
      { subagentLimits: { maxDepth: 1.5 } },
      { subagentLimits: { maxLiveChildren: "8" } },
      { subagentLimits: { maxLiveChildren: Number.NaN } },
    ];
    for (const extra of bad) {
      await rejectsWith(
        () => defineAgent({ id: "l", systemPrompt: "", gateway: gateway(), ...extra }),
        "invalid_input",
      );
    }
    const fine = defineAgent({
      id: "l",
      systemPrompt: "",
      gateway: gateway(),
      subagents: [worker],
      parentEvents: true,
      subagentLimits: { maxDepth: undefined, maxLiveChildren: 2 },
    });
    // An explicit undefined keeps the default rather than erasing it.
    assert.deepEqual(fine.subagentLimits, { maxDepth: 3, maxLiveChildren: 2 });
    assert.equal(fine.parentEvents, true);
    assert.equal(fine.subagents.get("worker"), worker);
  });

  test("list's parentThreadId is a thread id; cancel's includeDescendants a boolean", async () => {
    const host = await openHost({ store: memoryStore() });
    const threads = host.threads({
      agent: defineAgent({ id: "a", systemPrompt: "", gateway: gateway() }),
    });
    try {
      const { threadId } = await threads.create({ requestKey: "c" });
      for (const parentThreadId of [5, null, {}, "thread_none", "\uD800"] as Loose[]) {
        await rejectsWith(threads.list({ parentThreadId }), "thread_not_found");
      }
      assert.deepEqual(await threads.list({ parentThreadId: threadId }), { threads: [] });
      await rejectsWith(threads.list({ parentThreadId: threadId, limit: 0 }), "invalid_input");
      for (const includeDescendants of ["yes", 1, null] as Loose[]) {
        await rejectsWith(
          threads.cancel({ threadId, requestKey: "k", includeDescendants }),
          "invalid_input",
        );
      }
      const { view } = await threads.cancel({
        threadId,
        requestKey: "k",
        includeDescendants: true,
      });
      assert.equal(view.status, "idle");
    } finally {
      await host.shutdown();
    }
  });
});

test("a parent that admitted child facts, and its child, read back from the store", async () => {
  // Shutdown closes the store; this one outlives each host, like a file would.
  const inner = memoryStore();
  const store = { ...inner, close: () => Promise.resolve() };
  const f = await family(
    [
      { toolCalls: [{ name: "spawn_agent", arguments: { agent: "alpha", task: "one" } }] },
      waitForSpawned,
      { text: "done" },
    ],
    [childAgent("alpha")],
    { parentEvents: true },
    store,
  );
  await f.threads.send({ threadId: f.threadId, requestKey: "s1", input: { text: "go" } });
  await settleAll(f);
  const first = await f.threads.view(f.threadId);
  const childId: string =
    JSON.parse(first.items.find((i) => i.tool?.name === "spawn_agent")!.tool!.output!)
      .threadId;
  await f.host.shutdown();

  // A second host reads every entry (child_events included) and the child's
  // record (with agentId) through the stored-shape checks.
  const again = await openHost({ store });
  try {
    const threads = again.threads({ agent: f.parent });
    const parent = await threads.view(f.threadId);
    assert.deepEqual(parent.items.map((i) => i.id), first.items.map((i) => i.id));
    const child = await threads.view(childId);
    assert.equal(child.parentThreadId, f.threadId);
    const listed = await threads.list({ parentThreadId: f.threadId });
    assert.deepEqual(listed.threads.map((t) => t.threadId), [childId]);
    const ctx = await threads.history(f.threadId);
    assert.equal(ctx.items.at(-1)?.text, "done");
  } finally {
    await again.shutdown();
  }
});
