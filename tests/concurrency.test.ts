// Request keys under concurrency: many callers racing with one key admit one
// turn and all get its result (DESIGN.md §8 "Identity and request keys").
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defineAgent, memoryStore, openHost } from "@floret/engine";
import type { KvStore } from "@floret/engine";
import { libsqlStore } from "@floret/engine/libsql";
import { scriptedGateway } from "@floret/engine/testing";

const SENDERS = 25;

/** Races 25 identical sends on a thread the host has (`warm`) or has not yet loaded. */
async function raceOneKey(open: () => KvStore, warm: boolean): Promise<void> {
  let threadId: string;
  if (warm) {
    threadId = "";
  } else {
    // Created by an earlier host, so the racing host loads the thread during the race.
    const setup = await openHost({ store: open() });
    const threads = setup.threads({
      agent: defineAgent({ id: "setup", systemPrompt: "", gateway: scriptedGateway([]) }),
    });
    threadId = (await threads.create({ requestKey: "create" })).threadId;
    await setup.shutdown();
  }
  const gateway = scriptedGateway([{ text: "Only once.", delayMs: 20 }, { text: "Never twice." }]);
  const host = await openHost({ store: open() });
  try {
    const threads = host.threads({
      agent: defineAgent({ id: "racer", systemPrompt: "Race.", gateway }),
    });
    if (warm) threadId = (await threads.create({ requestKey: "create" })).threadId;
    const results = await Promise.all(
      Array.from(
        { length: SENDERS },
        () => threads.send({ threadId, requestKey: "same-key", input: { text: "Hello once" } }),
      ),
    );
    const turnIds = new Set(results.map((result) => result.turnId));
    assert.equal(turnIds.size, 1, "every caller gets the same turn");
    assert.ok(results[0].turnId?.startsWith("turn_"));
    assert.ok(results.every((result) => result.queued === false), "nothing was queued");

    const view = await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
    assert.deepEqual(view.turns.map((turn) => [turn.turnId, turn.outcome]), [[
      results[0].turnId,
      "completed",
    ]]);
    assert.deepEqual(view.items.map((item) => [item.kind, item.text]), [
      ["user", "Hello once"],
      ["assistant", "Only once."],
    ]);
    assert.deepEqual(view.queue, []);
    assert.equal(gateway.requests.length, 1, "the gateway saw one request stream");
  } finally {
    await host.shutdown();
  }
}

test("25 concurrent sends with one request key admit exactly one turn (memory store)", async () => {
  await raceOneKey(() => memoryStore(), true);
});

test("25 concurrent sends with one request key admit exactly one turn (libSQL file, cold thread)", {
  timeout: 60_000,
}, async () => {
  const dir = mkdtempSync(join(tmpdir(), "floret-concurrency-"));
  try {
    const url = `file:${join(dir, "journal.db")}`;
    await raceOneKey(() => libsqlStore({ url }), false);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
