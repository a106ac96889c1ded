// Audit (round 11): `host.prepareRestore()` on a deferred host while a
// subscriber watches (reads, subscribe included, work before `activate`). It
// stops a waiting turn, releases its approval and moves queued input to
// `view.restoredInputs`; the subscriber's copy must end equal to the view,
// `restoredInputs` included, also after `deleteQueued` dismisses one.
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { defineAgent, defineTool, openHost } from "@floret/engine";
import { scriptedGateway } from "@floret/engine/testing";
import { libsqlStore } from "@floret/engine/libsql";
import { Observer, stateOf } from "./support/audit_observer.ts";

const dir = mkdtempSync(join(tmpdir(), "floret-audit-restore-"));
after(() => rmSync(dir, { recursive: true, force: true }));

describe("prepareRestore under a subscriber", () => {
  test("the subscriber's copy ends equal to the view, restoredInputs included", async () => {
    const url = `file:${join(dir, "restored.db")}`;
    const approveMe = defineTool({
      name: "approve_me",
      description: "Needs approval",
      input: z.object({}),
      effect: "write",
      permission: "ask",
      execute: () => "ran",
    });
    const agent = defineAgent({
      id: "restore",
      systemPrompt: "R.",
      gateway: scriptedGateway([{ toolCalls: [{ name: "approve_me", arguments: {} }] }]),
      tools: [approveMe],
    });
    // The store as the backup left it: a turn waiting for approval, one input queued.
    const live = await openHost({ store: libsqlStore({ url }) });
    const before = live.threads({ agent });
    const { threadId } = await before.create({ requestKey: "create" });
    await before.send({ threadId, requestKey: "one", input: { text: "one" } });
    const waiting = await before.waitForIdle(threadId, { timeoutMs: 10_000 });
    assert.equal(waiting.status, "waiting");
    const queued = await before.send({ threadId, requestKey: "two", input: { text: "two" } });
    assert.equal(queued.queued, true);
    await live.shutdown();

    const restored = await openHost({ store: libsqlStore({ url }), deferExecution: true });
    const threads = restored.threads({ agent });
    const observer = await Observer.join(threads, threadId);
    assert.equal(observer.local.queue.length, 1);
    const report = await restored.prepareRestore();
    assert.deepEqual(report, { stoppedTurns: 1, releasedInteractions: 1, restoredInputs: 1 });
    const view = await threads.view(threadId);
    assert.deepEqual(view.restoredInputs?.map((input) => input.text), ["two"]);
    assert.deepEqual(view.queue, []);
    await observer.reach(view);
    assert.deepEqual(observer.problems, []);
    assert.deepEqual(stateOf(observer.local), stateOf(view));
    // Dismissing the restored input (README: deleteQueued with its id) reaches the subscriber too.
    await restored.activate();
    const dismissed = await threads.deleteQueued({
      threadId,
      requestKey: "dismiss",
      queueId: view.restoredInputs![0]!.id,
    });
    assert.equal(dismissed.view.restoredInputs, undefined);
    await observer.reach(dismissed.view);
    assert.deepEqual(observer.problems, []);
    assert.deepEqual(stateOf(observer.local), stateOf(await threads.view(threadId)));
    await observer.leave();
    await restored.shutdown();
  });
});
