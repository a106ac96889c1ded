// Audit of replays that arrive late (DESIGN §8 "Same key + same fingerprint →
// the committed result, nothing runs again"): after the thread moved on — a
// new turn running, the queue changed, the thread restarted mid-turn, or a
// second host on the same libSQL file — a replayed key must not act on the
// thread as it is now. Memory store and libSQL file.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { scriptedGateway } from "@floret/engine/testing";
import { BACKENDS, codeOf, durable, openAudit } from "./support/audit_commands.ts";
import { writeCalls, writeTool } from "./support/interactions.ts";

const WAIT = { timeoutMs: 10_000 };

for (const { name, make } of BACKENDS) {
  describe(`late replays (${name})`, () => {
    test("cancel, retry, steer, promote, delete-queued and send replayed while a later turn runs", {
      timeout: 60_000,
    }, async () => {
      const backend = make();
      const gateway = scriptedGateway([
        { hang: true }, // turn 1, cancelled
        { text: "promoted done" }, // turn 2: the queued input, promoted
        { hang: true }, // turn 3: retry regenerates turn 2, under way while the replays arrive
        { hang: true }, // turn 3 after the steer
      ]);
      try {
        let { host, threads } = await openAudit(backend, gateway);
        const { threadId: id } = await threads.create({ requestKey: "c" });
        const first = await threads.send({
          threadId: id,
          requestKey: "s1",
          input: { text: "one" },
        });
        const queued = await threads.send({
          threadId: id,
          requestKey: "q",
          input: { text: "queued" },
        });
        const dropped = await threads.send({
          threadId: id,
          requestKey: "q2",
          input: { text: "dropped" },
        });
        const dropId = dropped.view.queue.find((q) => q.text === "dropped")!.id;
        const queueId = queued.view.queue[0].id;
        await threads.deleteQueued({ threadId: id, requestKey: "dq", queueId: dropId });
        await threads.cancel({ threadId: id, requestKey: "x" });
        let view = await threads.waitForIdle(id, WAIT);
        // After a cancelled turn the queued input waits for promoteQueued.
        assert.deepEqual(view.queue.map((q) => q.id), [queueId]);
        const promoted = await threads.promoteQueued({ threadId: id, requestKey: "p", queueId });
        await threads.waitForIdle(id, WAIT);
        const retried = await threads.retry({ threadId: id, requestKey: "r" });
        assert.equal(retried.view.status, "running");
        await threads.steer({ threadId: id, requestKey: "st", text: "steer" });
        view = await threads.view(id);
        assert.equal(view.status, "running");
        const before = durable(view);
        const requests = gateway.requests.length;

        const replays = async () => {
          await threads.cancel({ threadId: id, requestKey: "x" });
          assert.equal(
            (await threads.retry({ threadId: id, requestKey: "r" })).turnId,
            retried.turnId,
          );
          assert.equal(
            (await threads.send({ threadId: id, requestKey: "s1", input: { text: "one" } })).turnId,
            first.turnId,
          );
          await threads.send({ threadId: id, requestKey: "q", input: { text: "queued" } });
          await threads.send({ threadId: id, requestKey: "q2", input: { text: "dropped" } });
          await threads.deleteQueued({ threadId: id, requestKey: "dq", queueId: dropId });
          assert.equal(
            (await threads.promoteQueued({ threadId: id, requestKey: "p", queueId })).turnId,
            promoted.turnId,
          );
          await threads.steer({ threadId: id, requestKey: "st", text: "steer" });
          assert.equal(
            await codeOf(
              threads.send({ threadId: id, requestKey: "q2", input: { text: "other" } }),
            ),
            "request_conflict",
          );
        };
        await replays();
        view = await threads.view(id);
        assert.equal(view.status, "running", "a replayed cancel stops nothing");
        assert.deepEqual(durable(view), before, "replays changed nothing");
        assert.deepEqual(view.queue, [], "a replayed send queues nothing again");
        assert.equal(gateway.requests.length, requests);

        // After a restart the running turn reads interrupted; the replays still change nothing.
        await host.shutdown();
        ({ host, threads } = await openAudit(backend, gateway));
        const reloaded = await threads.view(id);
        assert.equal(reloaded.turns.at(-1)?.outcome, "interrupted");
        const settled = durable(reloaded);
        await threads.cancel({ threadId: id, requestKey: "x" });
        assert.equal(
          (await threads.retry({ threadId: id, requestKey: "r" })).turnId,
          retried.turnId,
        );
        await threads.send({ threadId: id, requestKey: "q", input: { text: "queued" } });
        await threads.send({ threadId: id, requestKey: "q2", input: { text: "dropped" } });
        assert.equal(
          (await threads.promoteQueued({ threadId: id, requestKey: "p", queueId })).turnId,
          promoted.turnId,
        );
        await threads.steer({ threadId: id, requestKey: "st", text: "steer" });
        assert.deepEqual(durable(await threads.view(id)), settled);
        assert.equal(gateway.requests.length, requests);
        await host.shutdown();
      } finally {
        backend.dispose();
      }
    });
  });
}

for (const { name, make } of BACKENDS) {
  describe(`late replays of edits, concurrent replays (${name})`, () => {
    test(
      "a replayed setTitle or editQueued does not undo a later edit; modes and keys that replay",
      {
        timeout: 60_000,
      },
      async () => {
        const backend = make();
        const ran: string[] = [];
        const gateway = scriptedGateway([{ hang: true }, writeCalls("a"), { text: "done" }]);
        try {
          let { host, threads } = await openAudit(backend, gateway, [writeTool(ran)]);
          const { threadId: id } = await threads.create({ requestKey: "c" });
          await threads.setTitle({ threadId: id, requestKey: "t1", title: "A" });
          await threads.setTitle({ threadId: id, requestKey: "t2", title: "B" });
          await threads.setTitle({ threadId: id, requestKey: "t1", title: "A" });
          assert.equal((await threads.view(id)).title, "B");

          await threads.send({ threadId: id, requestKey: "s", input: { text: "go" } });
          const q = await threads.send({ threadId: id, requestKey: "q", input: { text: "one" } });
          const queueId = q.view.queue[0].id;
          const e1 = { threadId: id, requestKey: "e1", queueId, text: "two", expectedText: "one" };
          await threads.editQueued(e1);
          await threads.editQueued({ ...e1, requestKey: "e2", text: "three", expectedText: "two" });
          await threads.editQueued(e1);
          assert.equal((await threads.view(id)).queue[0].text, "three");

          // cancel's mode is not part of its fingerprint: both calls are one cancel.
          const [x1, x2] = await Promise.all([
            threads.cancel({ threadId: id, requestKey: "x", mode: "immediate" }),
            threads.cancel({ threadId: id, requestKey: "x", mode: "graceful" }),
          ]);
          assert.notEqual(x1.view.status, "running");
          assert.notEqual(x2.view.status, "running");
          await threads.waitForIdle(id, WAIT);
          await threads.deleteQueued({ threadId: id, requestKey: "dq", queueId });

          // The same resolution under two keys at once: both return, the tool runs once.
          await threads.send({ threadId: id, requestKey: "w", input: { text: "write" } });
          const waiting = await threads.waitForIdle(id, WAIT);
          const approve = {
            threadId: id,
            interactionId: waiting.pending[0].id,
            decision: "approve" as const,
          };
          await Promise.all([
            threads.respond({ ...approve, requestKey: "r1" }),
            threads.respond({ ...approve, requestKey: "r2" }),
          ]);
          const view = await threads.waitForIdle(id, WAIT);
          assert.deepEqual(ran, ["a"]);
          assert.deepEqual(view.turns.map((t) => t.outcome), ["cancelled", "completed"]);
          await host.shutdown();

          ({ host, threads } = await openAudit(backend, gateway, [writeTool(ran)]));
          await threads.setTitle({ threadId: id, requestKey: "t1", title: "A" });
          await threads.respond({ ...approve, requestKey: "r2" });
          await threads.respond({ ...approve, requestKey: "r4" });
          assert.equal(
            await codeOf(threads.respond({ ...approve, requestKey: "r3", decision: "deny" })),
            "request_conflict",
          );
          const after = await threads.view(id);
          assert.equal(after.title, "B");
          assert.deepEqual(durable(after), durable(view));
          assert.deepEqual(ran, ["a"]);
          await host.shutdown();
        } finally {
          backend.dispose();
        }
      },
    );
  });
}

for (const { name, make } of BACKENDS) {
  describe(`two hosts on one store (${name})`, () => {
    test("the same create, fork and send keys raced from two hosts: one effect, one answer", {
      timeout: 60_000,
    }, async () => {
      const backend = make();
      const gateway = scriptedGateway([{ text: "once", delayMs: 20 }, { text: "twice" }]);
      try {
        const a = await openAudit(backend, gateway);
        const b = await openAudit(backend, gateway);
        const [ca, cb] = await Promise.all([
          a.threads.create({ requestKey: "c", title: "Shared" }),
          b.threads.create({ requestKey: "c", title: "Shared" }),
        ]);
        assert.equal(ca.threadId, cb.threadId);
        const id = ca.threadId;
        const [fa, fb] = await Promise.all([
          a.threads.fork({ threadId: id, requestKey: "f" }),
          b.threads.fork({ threadId: id, requestKey: "f" }),
        ]);
        assert.equal(fa.threadId, fb.threadId);
        const send = { threadId: id, requestKey: "s", input: { text: "hello" } };
        const sent = await Promise.allSettled([a.threads.send(send), b.threads.send(send)]);
        const turnIds = sent.flatMap((o) => o.status === "fulfilled" ? [o.value.turnId] : []);
        // The loser may see the thread owned by the other host; never a second turn.
        for (const o of sent) {
          if (o.status === "rejected") {
            assert.ok(
              ["thread_busy"].includes(await codeOf(Promise.reject(o.reason))),
              String(o.reason),
            );
          }
        }
        assert.ok(turnIds.length >= 1);
        assert.equal(new Set(turnIds).size, 1);
        const owner = sent[0].status === "fulfilled" ? a : b;
        const view = await owner.threads.waitForIdle(id, WAIT);
        assert.deepEqual(view.items.map((i) => i.text), ["hello", "once"]);
        await a.host.shutdown();
        await b.host.shutdown();
        const c = await openAudit(backend, gateway);
        assert.deepEqual(
          (await c.threads.list()).threads.map((t) => t.threadId).sort(),
          [id, fa.threadId].sort(),
        );
        assert.deepEqual((await c.threads.view(id)).items.map((i) => i.text), ["hello", "once"]);
        await c.host.shutdown();
      } finally {
        backend.dispose();
      }
    });
  });
}

for (const { name, make } of BACKENDS) {
  describe(`two hosts on one store, different keys (${name})`, () => {
    test("manual compactions below the target from both hosts: one record per key, none lost", {
      timeout: 60_000,
    }, async () => {
      const backend = make();
      const gateway = scriptedGateway([]);
      try {
        const a = await openAudit(backend, gateway);
        const b = await openAudit(backend, gateway);
        const { threadId: id } = await a.threads.create({ requestKey: "c" });
        await b.threads.view(id);
        const results = await Promise.all(
          [0, 1, 2, 3, 4, 5].map((i) =>
            (i % 2 === 0 ? a : b).threads.compact({ threadId: id, requestKey: `k${i}` })
          ),
        );
        assert.deepEqual(results.map((r) => r.outcome), Array(6).fill("noop"));
        const ids = results.map((r) => r.compaction?.operationId);
        assert.equal(new Set(ids).size, 6, "six operations");
        // Each host replays the other's keys: the same operation, no new record.
        for (const [i, result] of results.entries()) {
          const replay = await (i % 2 === 0 ? b : a).threads.compact({
            threadId: id,
            requestKey: `k${i}`,
          });
          assert.equal(replay.compaction?.operationId, result.compaction?.operationId);
        }
        await a.host.shutdown();
        await b.host.shutdown();
        const c = await openAudit(backend, gateway);
        const records = (await c.threads.context(id)).compactions;
        assert.deepEqual(records.map((r) => r.operationId).sort(), [...ids].sort());
        assert.ok(records.every((r) => r.status === "noop"));
        await c.host.shutdown();
      } finally {
        backend.dispose();
      }
    });
  });
}
