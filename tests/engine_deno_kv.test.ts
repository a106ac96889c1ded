// The engine on Deno KV: a tool conversation on a file-backed database
// survives a restart of the host, a replayed request key returns the
// committed result and runs nothing, and journal entries above Deno's 64 KiB
// value limit read back whole. Skipped, saying so, where there is no Deno KV.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type KvStore, openHost } from "@floret/engine";
import { denoKvStore } from "@floret/engine/deno-kv";
import { addTool, engine, sendAndWait } from "./support/engine.ts";
import { defineAgent } from "@floret/engine";
import { scriptedGateway } from "@floret/engine/testing";
import { skipOffDeno } from "./support/skip.ts";

const deno = (globalThis as { Deno?: { openKv(path?: string): Promise<unknown> } }).Deno;
const skip = skipOffDeno(import.meta.url);

const dir = mkdtempSync(join(tmpdir(), "floret-engine-denokv-"));
after(() => rmSync(dir, { recursive: true, force: true }));

async function store(path: string): Promise<KvStore> {
  return denoKvStore(await deno!.openKv(path), { closeKv: true });
}

test("a tool conversation on a Deno KV file survives a restart, and a replay runs nothing", {
  skip,
}, async () => {
  const path = join(dir, "conversation.kv");
  const calls = { count: 0 };
  const first = await engine([
    { toolCalls: [{ name: "add", arguments: { a: 2, b: 3 } }] },
    { text: "2 + 3 = 5" },
  ], { store: await store(path), tools: [addTool(calls)] });
  const accepted = await first.threads.send({
    threadId: first.threadId,
    requestKey: "msg-1",
    input: { text: "What is 2 + 3?" },
  });
  const settled = await first.threads.waitForIdle(first.threadId, { timeoutMs: 10_000 });
  assert.deepEqual(settled.items.map((item) => item.kind), ["user", "tool", "assistant"]);
  assert.equal(settled.items.at(-1)?.text, "2 + 3 = 5");
  assert.equal(calls.count, 1);
  await first.host.shutdown();

  const gateway = scriptedGateway([{ text: "Should never be asked." }]);
  const host = await openHost({ store: await store(path) });
  try {
    const threads = host.threads({
      agent: defineAgent({
        id: "test-agent",
        systemPrompt: "You are a test agent.",
        gateway,
        tools: [addTool(calls)],
      }),
    });
    const again = await threads.view(first.threadId);
    assert.deepEqual(again.items, settled.items);
    assert.deepEqual(again.turns, settled.turns);
    const replay = await threads.send({
      threadId: first.threadId,
      requestKey: "msg-1",
      input: { text: "What is 2 + 3?" },
    });
    assert.equal(replay.turnId, accepted.turnId);
    assert.equal(replay.view.status, "idle", "a replay starts nothing");
    assert.equal(gateway.requests.length, 0);
    assert.equal(calls.count, 1, "the tool did not run again");
  } finally {
    await host.shutdown();
  }
});

test("messages larger than a Deno KV value are journaled and read back whole", {
  skip,
}, async () => {
  const path = join(dir, "large.kv");
  const text = "0123456789abcdef".repeat(20_000); // 320,000 characters, five Deno KV values
  const e = await engine([{ text: `echo: ${text}` }], { store: await store(path) });
  const view = await sendAndWait(e, text, "large");
  assert.equal(view.items.at(-1)?.text, `echo: ${text}`);
  await e.host.shutdown();
  const host = await openHost({ store: await store(path) });
  try {
    const threads = host.threads({
      agent: defineAgent({ id: "test-agent", systemPrompt: "s", gateway: scriptedGateway([]) }),
    });
    const again = await threads.view(e.threadId);
    assert.equal(again.items[0].text, text);
    assert.equal(again.items.at(-1)?.text, `echo: ${text}`);
  } finally {
    await host.shutdown();
  }
});
