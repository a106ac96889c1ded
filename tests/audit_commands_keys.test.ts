// Audit of request keys on every command (DESIGN §8 "Identity and request
// keys", §10 precise points on respond and compact keys): a replay returns the
// committed result and runs nothing, on the same host and on a new host over
// the same store; another input or another command kind under the key is
// `request_conflict` and changes nothing. Memory store and libSQL file.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { scriptedGateway } from "@floret/engine/testing";
import { BACKENDS, codeOf, durable, openAudit } from "./support/audit_commands.ts";
import { writeCalls, writeTool } from "./support/interactions.ts";

const WAIT = { timeoutMs: 10_000 };

for (const { name, make } of BACKENDS) {
  describe(`request keys on every command (${name})`, () => {
    test(
      "create, send, setTitle, respond, retry, fork, compact, cancel, delete: replay, conflicts, restart",
      {
        timeout: 60_000,
      },
      async () => {
        const backend = make();
        const ran: string[] = [];
        const gateway = scriptedGateway([
          { text: "first answer" },
          writeCalls("x"),
          { text: "after approval" },
          { text: "regenerated" },
        ]);
        try {
          let { host, threads } = await openAudit(backend, gateway, [writeTool(ran)]);

          // create: store-scoped key.
          const a = await threads.create({ requestKey: "c1", title: "T" });
          assert.equal(
            (await threads.create({ requestKey: "c1", title: "T" })).threadId,
            a.threadId,
          );
          assert.equal(
            (await threads.create({ requestKey: " c1 ", title: "T" })).threadId,
            a.threadId,
          );
          assert.equal(
            await codeOf(threads.create({ requestKey: "c1", title: "U" })),
            "request_conflict",
          );
          assert.equal(await codeOf(threads.create({ requestKey: "c1" })), "request_conflict");
          const id = a.threadId;

          // send: thread-scoped key.
          const s1 = await threads.send({
            threadId: id,
            requestKey: "s1",
            input: { text: "hello" },
          });
          assert.equal(s1.queued, false);
          await threads.waitForIdle(id, WAIT);
          const s1again = await threads.send({
            threadId: id,
            requestKey: "s1",
            input: { text: "hello" },
          });
          assert.equal(s1again.turnId, s1.turnId);
          assert.equal(s1again.queued, false);
          assert.equal(
            await codeOf(threads.send({ threadId: id, requestKey: "s1", input: { text: "bye" } })),
            "request_conflict",
          );
          let view = await threads.view(id);
          assert.deepEqual(view.items.map((item) => [item.kind, item.text]), [
            ["user", "hello"],
            ["assistant", "first answer"],
          ]);
          assert.equal(gateway.requests.length, 1);

          // setTitle, and a key of another kind on the same thread.
          await threads.setTitle({ threadId: id, requestKey: "t1", title: "New" });
          await threads.setTitle({ threadId: id, requestKey: "t1", title: "New" });
          assert.equal(
            await codeOf(threads.setTitle({ threadId: id, requestKey: "t1", title: "Other" })),
            "request_conflict",
          );
          const before = await threads.view(id);
          assert.equal(
            await codeOf(threads.setTitle({ threadId: id, requestKey: "s1", title: "Stolen" })),
            "request_conflict",
          );
          assert.equal(
            await codeOf(threads.send({ threadId: id, requestKey: "t1", input: { text: "x" } })),
            "request_conflict",
          );
          assert.equal(
            await codeOf(threads.compact({ threadId: id, requestKey: "t1" })),
            "request_conflict",
          );
          assert.equal(
            await codeOf(threads.delete({ threadId: id, requestKey: "s1" })),
            "request_conflict",
          );
          assert.equal(
            await codeOf(threads.cancel({ threadId: id, requestKey: "s1" })),
            "request_conflict",
          );
          assert.equal(
            await codeOf(threads.retry({ threadId: id, requestKey: "s1" })),
            "request_conflict",
          );
          const after = await threads.view(id);
          assert.equal(after.title, "New");
          assert.equal(after.viewVersion, before.viewVersion, "a conflict changes nothing");
          assert.deepEqual(durable(after), durable(before));

          // respond: an approval, resolved once; a replay and the same resolution under
          // another key run nothing; a different one conflicts.
          await threads.send({ threadId: id, requestKey: "s2", input: { text: "write it" } });
          const waiting = await threads.waitForIdle(id, WAIT);
          assert.equal(waiting.status, "waiting");
          const interactionId = waiting.pending[0].id;
          const r = { threadId: id, requestKey: "r1", interactionId, decision: "approve" as const };
          await threads.respond(r);
          await threads.waitForIdle(id, WAIT);
          await threads.respond(r);
          await threads.respond({ ...r, requestKey: "r2" });
          assert.equal(
            await codeOf(threads.respond({ ...r, decision: "deny" })),
            "request_conflict",
          );
          assert.equal(
            await codeOf(threads.respond({ ...r, requestKey: "r3", decision: "deny" })),
            "request_conflict",
          );
          assert.equal(
            await codeOf(threads.setTitle({ threadId: id, requestKey: "r1", title: "Z" })),
            "request_conflict",
          );
          view = await threads.waitForIdle(id, WAIT);
          assert.deepEqual(ran, ["x"], "the approved tool ran once");
          assert.equal(gateway.requests.length, 3);

          // retry regenerates the completed latest turn, once.
          const rt = await threads.retry({ threadId: id, requestKey: "rt1" });
          await threads.waitForIdle(id, WAIT);
          const rtAgain = await threads.retry({ threadId: id, requestKey: "rt1" });
          assert.equal(rtAgain.turnId, rt.turnId);
          assert.equal(gateway.requests.length, 4, "a replayed retry runs nothing");
          assert.equal((await threads.view(id)).turns.length, 3);

          // fork: store-scoped like create.
          const firstItem = (await threads.view(id)).items[0].id;
          const f = await threads.fork({ threadId: id, requestKey: "f1" });
          assert.equal(
            (await threads.fork({ threadId: id, requestKey: "f1" })).threadId,
            f.threadId,
          );
          assert.equal(
            await codeOf(threads.fork({ threadId: id, requestKey: "f1", atItemId: firstItem })),
            "request_conflict",
          );
          assert.equal(await codeOf(threads.create({ requestKey: "f1" })), "request_conflict");
          assert.equal(
            await codeOf(threads.fork({ threadId: id, requestKey: "c1" })),
            "request_conflict",
          );

          // compact below the target: one noop record per key; a replay adds none.
          assert.equal((await threads.compact({ threadId: id, requestKey: "k1" })).outcome, "noop");
          assert.equal((await threads.compact({ threadId: id, requestKey: "k1" })).outcome, "noop");
          assert.equal((await threads.context(id)).compactions.length, 1);
          assert.equal(
            await codeOf(threads.send({ threadId: id, requestKey: "k1", input: { text: "k" } })),
            "request_conflict",
          );
          assert.equal((await threads.context(id)).compactions.length, 1);

          // cancel on an idle thread, mode not fingerprinted.
          await threads.cancel({ threadId: id, requestKey: "x1" });
          await threads.cancel({ threadId: id, requestKey: "x1", mode: "graceful" });

          // delete a fork; its replay succeeds; the thread is gone.
          const d = await threads.fork({ threadId: id, requestKey: "f2" });
          await threads.delete({ threadId: d.threadId, requestKey: "d1" });
          await threads.delete({ threadId: d.threadId, requestKey: "d1" });
          assert.equal(await codeOf(threads.view(d.threadId)), "thread_not_found");

          const live = durable(await threads.view(id));
          const liveFork = durable(await threads.view(f.threadId));
          await host.shutdown();

          // A new host on the same store: the same view, every replay the same result.
          ({ host, threads } = await openAudit(backend, gateway, [writeTool(ran)]));
          assert.deepEqual(durable(await threads.view(id)), live);
          assert.deepEqual(durable(await threads.view(f.threadId)), liveFork);
          assert.equal((await threads.create({ requestKey: "c1", title: "T" })).threadId, id);
          assert.equal(await codeOf(threads.create({ requestKey: "c1" })), "request_conflict");
          const s1restart = await threads.send({
            threadId: id,
            requestKey: "s1",
            input: { text: "hello" },
          });
          assert.equal(s1restart.turnId, s1.turnId);
          assert.equal(
            await codeOf(threads.send({ threadId: id, requestKey: "s1", input: { text: "bye" } })),
            "request_conflict",
          );
          await threads.setTitle({ threadId: id, requestKey: "t1", title: "New" });
          await threads.respond(r);
          assert.equal(
            await codeOf(threads.respond({ ...r, decision: "deny" })),
            "request_conflict",
          );
          assert.equal(
            (await threads.retry({ threadId: id, requestKey: "rt1" })).turnId,
            rt.turnId,
          );
          assert.equal(
            (await threads.fork({ threadId: id, requestKey: "f1" })).threadId,
            f.threadId,
          );
          assert.equal((await threads.compact({ threadId: id, requestKey: "k1" })).outcome, "noop");
          assert.equal((await threads.context(id)).compactions.length, 1);
          await threads.cancel({ threadId: id, requestKey: "x1" });
          await threads.delete({ threadId: d.threadId, requestKey: "d1" });
          assert.equal(
            await codeOf(threads.delete({ threadId: id, requestKey: "d1" })),
            "fulfilled",
          );
          // That last one was a new key on a live thread: it deleted it.
          assert.equal(await codeOf(threads.view(id)), "thread_not_found");
          assert.deepEqual(ran, ["x"]);
          assert.equal(gateway.requests.length, 4, "no replay reached the model");
          await host.shutdown();
        } finally {
          backend.dispose();
        }
      },
    );

    test("queue commands and steer: replay, conflicts and kinds while a turn runs", {
      timeout: 60_000,
    }, async () => {
      const backend = make();
      const gateway = scriptedGateway([{ hang: true }, { hang: true }, { text: "promoted" }]);
      try {
        let { host, threads } = await openAudit(backend, gateway);
        const { threadId: id } = await threads.create({ requestKey: "c" });
        await threads.send({ threadId: id, requestKey: "run", input: { text: "go" } });
        const q1 = await threads.send({ threadId: id, requestKey: "q1", input: { text: "one" } });
        const q2 = await threads.send({ threadId: id, requestKey: "q2", input: { text: "two" } });
        assert.equal(q1.queued, true);
        assert.equal(q2.queued, true);
        const q1again = await threads.send({
          threadId: id,
          requestKey: "q1",
          input: { text: "one" },
        });
        assert.equal(q1again.queued, true);
        let view = await threads.view(id);
        assert.deepEqual(view.queue.map((q) => [q.requestKey, q.text]), [["q1", "one"], [
          "q2",
          "two",
        ]]);
        const [first, second] = view.queue;

        const edit = {
          threadId: id,
          requestKey: "e1",
          queueId: first.id,
          text: "uno",
          expectedText: "one",
        };
        await threads.editQueued(edit);
        await threads.editQueued(edit);
        assert.equal(
          await codeOf(threads.editQueued({ ...edit, text: "eins" })),
          "request_conflict",
        );
        await threads.deleteQueued({ threadId: id, requestKey: "dq", queueId: second.id });
        await threads.deleteQueued({ threadId: id, requestKey: "dq", queueId: second.id });
        assert.equal(
          await codeOf(threads.deleteQueued({ threadId: id, requestKey: "dq", queueId: first.id })),
          "request_conflict",
        );
        assert.equal(
          await codeOf(
            threads.promoteQueued({ threadId: id, requestKey: "dq", queueId: second.id }),
          ),
          "request_conflict",
        );

        await threads.steer({ threadId: id, requestKey: "st", text: "steer me" });
        await threads.steer({ threadId: id, requestKey: "st", text: "steer me" });
        assert.equal(
          await codeOf(threads.steer({ threadId: id, requestKey: "st", text: "other" })),
          "request_conflict",
        );
        assert.equal(
          await codeOf(threads.steer({ threadId: id, requestKey: "q1", text: "one" })),
          "request_conflict",
        );
        view = await threads.view(id);
        assert.deepEqual(view.items.filter((i) => i.kind === "user").map((i) => i.text), [
          "go",
          "steer me",
        ]);
        assert.deepEqual(view.queue.map((q) => [q.requestKey, q.text]), [["q1", "uno"]]);

        await threads.cancel({ threadId: id, requestKey: "stop" });
        view = await threads.waitForIdle(id, WAIT);
        assert.equal(view.turns.at(-1)?.outcome, "cancelled");
        assert.equal(view.queue.length, 1, "queued input stays after a cancelled turn");

        const p = await threads.promoteQueued({ threadId: id, requestKey: "p", queueId: first.id });
        await threads.waitForIdle(id, WAIT);
        assert.equal(
          (await threads.promoteQueued({ threadId: id, requestKey: "p", queueId: first.id }))
            .turnId,
          p.turnId,
        );
        const live = durable(await threads.view(id));
        assert.deepEqual((live.items as { text?: string }[]).map((i) => i.text), [
          "go",
          "steer me",
          "uno",
          "promoted",
        ]);
        await host.shutdown();

        ({ host, threads } = await openAudit(backend, gateway));
        assert.deepEqual(durable(await threads.view(id)), live);
        await threads.editQueued(edit);
        await threads.deleteQueued({ threadId: id, requestKey: "dq", queueId: second.id });
        await threads.steer({ threadId: id, requestKey: "st", text: "steer me" });
        assert.equal(
          (await threads.promoteQueued({ threadId: id, requestKey: "p", queueId: first.id }))
            .turnId,
          p.turnId,
        );
        assert.equal(
          await codeOf(threads.steer({ threadId: id, requestKey: "st", text: "other" })),
          "request_conflict",
        );
        await threads.cancel({ threadId: id, requestKey: "stop", mode: "graceful" });
        assert.deepEqual(durable(await threads.view(id)), live, "replays changed nothing");
        assert.equal(gateway.requests.length, 3);
        await host.shutdown();
      } finally {
        backend.dispose();
      }
    });
  });
}

describe("request keys are trimmed", () => {
  test("a key and its padded form are one key on every scope; a no-break space is trimmed too", async () => {
    const backend = BACKENDS[0].make();
    const gateway = scriptedGateway([{ text: "a" }]);
    const { host, threads } = await openAudit(backend, gateway);
    const { threadId: id } = await threads.create({ requestKey: "\tc\n" });
    assert.equal((await threads.create({ requestKey: "c" })).threadId, id);
    const s = await threads.send({ threadId: id, requestKey: " s ", input: { text: "x" } });
    await threads.waitForIdle(id, WAIT);
    assert.equal(
      (await threads.send({ threadId: id, requestKey: "s", input: { text: "x" } })).turnId,
      s.turnId,
    );
    assert.equal(
      await codeOf(threads.send({ threadId: id, requestKey: "s\u00a0", input: { text: "y" } })),
      "request_conflict",
    );
    await threads.setTitle({ threadId: id, requestKey: "t ", title: "A" });
    assert.equal(
      await codeOf(threads.setTitle({ threadId: id, requestKey: " t", title: "B" })),
      "request_conflict",
    );
    const f = await threads.fork({ threadId: id, requestKey: " f" });
    assert.equal((await threads.fork({ threadId: id, requestKey: "f " })).threadId, f.threadId);
    const long = "k".repeat(256);
    await threads.compact({ threadId: id, requestKey: `  ${long}  ` });
    await threads.compact({ threadId: id, requestKey: long });
    assert.equal((await threads.context(id)).compactions.length, 1);
    assert.equal(gateway.requests.length, 1);
    await host.shutdown();
  });
});
