// Audit of commands issued without awaiting (DESIGN §8): duplicates under one
// key give one effect and the same result, different inputs under one key
// give one winner and `request_conflict`, and bursts of different commands
// keep the order they were issued in. Afterwards the journal is whole: a new
// host on the same store shows the same view. Memory store and libSQL file;
// warm threads (loaded by the host) and cold ones (created by an earlier host).
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { scriptedGateway } from "@floret/engine/testing";
import { BACKENDS, codeOf, durable, openAudit } from "./support/audit_commands.ts";
import { writeCalls, writeTool } from "./support/interactions.ts";

const WAIT = { timeoutMs: 10_000 };

for (const { name, make } of BACKENDS) {
  describe(`commands issued without awaiting (${name})`, () => {
    test("duplicates under one key, every kind at once: one effect each, the same results", {
      timeout: 60_000,
    }, async () => {
      const backend = make();
      const gateway = scriptedGateway([{ text: "answer" }, { hang: true }, { hang: true }]);
      try {
        let { host, threads } = await openAudit(backend, gateway);
        const [c1, c2] = await Promise.all([
          threads.create({ requestKey: "c", title: "T" }),
          threads.create({ requestKey: "c", title: "T" }),
        ]);
        assert.equal(c1.threadId, c2.threadId);
        const id = c1.threadId;
        assert.equal((await threads.list()).threads.length, 1);

        const send = { threadId: id, requestKey: "s", input: { text: "hi" } };
        const [s1, s2, s3] = await Promise.all([
          threads.send(send),
          threads.send(send),
          threads.send(send),
        ]);
        assert.equal(s1.turnId, s2.turnId);
        assert.equal(s1.turnId, s3.turnId);
        await threads.waitForIdle(id, WAIT);

        const title = { threadId: id, requestKey: "t", title: "Named" };
        const fork = { threadId: id, requestKey: "f" };
        const compact = { threadId: id, requestKey: "k" };
        const [, , f1, f2, k1, k2] = await Promise.all([
          threads.setTitle(title),
          threads.setTitle(title),
          threads.fork(fork),
          threads.fork(fork),
          threads.compact(compact),
          threads.compact(compact),
        ]);
        assert.equal(f1.threadId, f2.threadId);
        assert.deepEqual([k1.outcome, k2.outcome], ["noop", "noop"]);
        assert.equal((await threads.context(id)).compactions.length, 1);
        assert.equal((await threads.list()).threads.length, 2, "one fork, not two");

        const retry = { threadId: id, requestKey: "r" };
        const [r1, r2] = await Promise.all([threads.retry(retry), threads.retry(retry)]);
        assert.equal(r1.turnId, r2.turnId);
        assert.equal(r1.view.status, "running");
        const steer = { threadId: id, requestKey: "st", text: "steer" };
        const cancel = { threadId: id, requestKey: "x" };
        await Promise.all([threads.steer(steer), threads.steer(steer)]);
        const [x1, x2] = await Promise.all([threads.cancel(cancel), threads.cancel(cancel)]);
        assert.notEqual(x1.view.status, "running");
        assert.notEqual(x2.view.status, "running");
        const view = await threads.waitForIdle(id, WAIT);
        assert.deepEqual(view.turns.map((t) => t.outcome), ["completed", "cancelled"]);
        assert.deepEqual(
          view.items.map((i) => [i.kind, i.text]),
          [["user", "hi"], ["assistant", "answer"], ["user", "steer"]],
        );
        assert.equal(view.title, "Named");

        const del = { threadId: f1.threadId, requestKey: "d" };
        await Promise.all([threads.delete(del), threads.delete(del), threads.delete(del)]);
        assert.equal(await codeOf(threads.view(f1.threadId)), "thread_not_found");
        assert.equal(gateway.requests.length, 3);

        const live = durable(view);
        await host.shutdown();
        ({ host, threads } = await openAudit(backend, gateway));
        assert.deepEqual(durable(await threads.view(id)), live);
        assert.equal(await codeOf(threads.view(f1.threadId)), "thread_not_found");
        assert.deepEqual((await threads.list()).threads.map((t) => t.threadId), [id]);
        await host.shutdown();
      } finally {
        backend.dispose();
      }
    });

    test("one key, different inputs or kinds at once: one winner, the others conflict", {
      timeout: 60_000,
    }, async () => {
      const backend = make();
      const gateway = scriptedGateway([{ text: "a" }, { text: "b" }]);
      try {
        const { host, threads } = await openAudit(backend, gateway);
        const created = await Promise.allSettled([
          threads.create({ requestKey: "c", title: "One" }),
          threads.create({ requestKey: "c", title: "Two" }),
          threads.fork({ threadId: "thread_none", requestKey: "c" }),
        ]);
        const winners = created.filter((o) => o.status === "fulfilled");
        assert.equal(winners.length, 1, JSON.stringify(created.map((o) => o.status)));
        const id = (winners[0] as PromiseFulfilledResult<{ threadId: string }>).value.threadId;
        const codes = await Promise.all(
          created.filter((o) => o.status === "rejected").map((o) =>
            codeOf(Promise.reject((o as PromiseRejectedResult).reason))
          ),
        );
        // The fork of an unknown thread is not found, or loses the key to a create.
        for (const code of codes) {
          assert.ok(["request_conflict", "thread_not_found"].includes(code), code);
        }
        assert.equal((await threads.list()).threads.length, 1);

        const before = await threads.view(id);
        const outcomes = await Promise.allSettled([
          threads.send({ threadId: id, requestKey: "k", input: { text: "first" } }),
          threads.send({ threadId: id, requestKey: "k", input: { text: "second" } }),
          threads.setTitle({ threadId: id, requestKey: "k", title: "Third" }),
          threads.compact({ threadId: id, requestKey: "k" }),
        ]);
        assert.equal(outcomes.filter((o) => o.status === "fulfilled").length, 1);
        for (const o of outcomes) {
          if (o.status === "rejected") {
            assert.equal(await codeOf(Promise.reject(o.reason)), "request_conflict");
          }
        }
        const view = await threads.waitForIdle(id, WAIT);
        const winner = outcomes.findIndex((o) => o.status === "fulfilled");
        const users = view.items.filter((i) => i.kind === "user").map((i) => i.text);
        assert.deepEqual(users, winner === 0 ? ["first"] : winner === 1 ? ["second"] : []);
        assert.equal(view.title, winner === 2 ? "Third" : before.title);
        assert.equal((await threads.context(id)).compactions.length, winner === 3 ? 1 : 0);
        await host.shutdown();
      } finally {
        backend.dispose();
      }
    });

    for (const temperature of ["warm", "cold"] as const) {
      test(
        `send ×3 then cancel, then titles, on a ${temperature} thread: issue order kept, journal whole`,
        {
          timeout: 60_000,
        },
        async () => {
          const backend = make();
          const gateway = scriptedGateway([{ hang: true }, { text: "late" }]);
          try {
            let { host, threads } = await openAudit(backend, gateway);
            const { threadId: id } = await threads.create({ requestKey: "c" });
            if (temperature === "cold") {
              await host.shutdown();
              ({ host, threads } = await openAudit(backend, gateway));
            }
            const sends = [1, 2, 3].map((n) =>
              threads.send({ threadId: id, requestKey: `s${n}`, input: { text: `m${n}` } })
            );
            const stop = threads.cancel({ threadId: id, requestKey: "x" });
            const titles = ["A", "B", "C"].map((title) =>
              threads.setTitle({ threadId: id, requestKey: `t${title}`, title })
            );
            const [a, b, c] = await Promise.all(sends);
            const stopped = await stop;
            await Promise.all(titles);
            assert.deepEqual([a.queued, b.queued, c.queued], [false, true, true]);
            assert.notEqual(stopped.view.status, "running");
            const view = await threads.waitForIdle(id, WAIT);
            assert.equal(view.title, "C", "the title issued last wins");
            assert.deepEqual(view.turns.map((t) => t.outcome), ["cancelled"]);
            assert.deepEqual(view.items.map((i) => i.text), ["m1"]);
            assert.deepEqual(view.queue.map((q) => q.text), ["m2", "m3"]);
            const live = durable(view);
            await host.shutdown();
            ({ host, threads } = await openAudit(backend, gateway));
            assert.deepEqual(durable(await threads.view(id)), live);
            await host.shutdown();
          } finally {
            backend.dispose();
          }
        },
      );
    }

    for (const temperature of ["warm", "cold"] as const) {
      test(
        `send, cancel, send without awaiting on a ${temperature} thread: the cancel comes first`,
        {
          timeout: 60_000,
        },
        async () => {
          const backend = make();
          const gateway = scriptedGateway([{ hang: true }, { text: "second" }]);
          try {
            let { host, threads } = await openAudit(backend, gateway);
            const { threadId: id } = await threads.create({ requestKey: "c" });
            if (temperature === "cold") {
              await host.shutdown();
              ({ host, threads } = await openAudit(backend, gateway));
            }
            const first = threads.send({ threadId: id, requestKey: "s1", input: { text: "one" } });
            const stop = threads.cancel({ threadId: id, requestKey: "x" });
            const next = threads.send({ threadId: id, requestKey: "s2", input: { text: "two" } });
            const [a, x, b] = await Promise.all([first, stop, next]);
            assert.equal(a.queued, false);
            assert.notEqual(x.view.status, "running");
            // Issued after the cancel, the send finds the thread stopped: it runs, it is not
            // left queued behind a cancelled turn.
            assert.equal(b.queued, false);
            assert.equal(b.view.status, "running");
            const view = await threads.waitForIdle(id, WAIT);
            assert.deepEqual(view.turns.map((t) => t.outcome), ["cancelled", "completed"]);
            assert.deepEqual(view.items.map((i) => i.text), ["one", "two", "second"]);
            assert.deepEqual(view.queue, []);
            await host.shutdown();
          } finally {
            backend.dispose();
          }
        },
      );
    }

    test("retry then send, promoteQueued then send, without awaiting: the first comes first", {
      timeout: 60_000,
    }, async () => {
      const backend = make();
      const gateway = scriptedGateway([
        { hang: true }, // turn 1, cancelled
        { text: "retried" }, // its retry
        { text: "after retry" }, // the send queued behind it
        { hang: true }, // turn 4, cancelled with input queued
        { text: "promoted" },
        { text: "after promote" },
      ]);
      try {
        const { host, threads } = await openAudit(backend, gateway);
        const { threadId: id } = await threads.create({ requestKey: "c" });
        await threads.send({ threadId: id, requestKey: "s1", input: { text: "one" } });
        await threads.cancel({ threadId: id, requestKey: "x1" });
        const [retried, sent] = await Promise.all([
          threads.retry({ threadId: id, requestKey: "r" }),
          threads.send({ threadId: id, requestKey: "s2", input: { text: "two" } }),
        ]);
        assert.equal(retried.view.status, "running");
        assert.equal(sent.queued, true, "the send finds the retried turn running");
        let view = await threads.waitForIdle(id, WAIT);
        assert.deepEqual(view.turns.map((t) => t.outcome), ["cancelled", "completed", "completed"]);
        assert.deepEqual(view.items.map((i) => i.text), [
          "one",
          "retried",
          "two",
          "after retry",
        ]);

        await threads.send({ threadId: id, requestKey: "s3", input: { text: "three" } });
        const queued = await threads.send({
          threadId: id,
          requestKey: "s4",
          input: { text: "four" },
        });
        await threads.cancel({ threadId: id, requestKey: "x2" });
        const [promoted, last] = await Promise.all([
          threads.promoteQueued({
            threadId: id,
            requestKey: "p",
            queueId: queued.view.queue[0].id,
          }),
          threads.send({ threadId: id, requestKey: "s5", input: { text: "five" } }),
        ]);
        assert.equal(promoted.view.status, "running");
        assert.equal(last.queued, true);
        view = await threads.waitForIdle(id, WAIT);
        assert.deepEqual(view.items.slice(4).map((i) => i.text), [
          "three",
          "four",
          "promoted",
          "five",
          "after promote",
        ]);
        assert.deepEqual(view.queue, []);
        await host.shutdown();
      } finally {
        backend.dispose();
      }
    });

    test("respond then cancel, compact then send, fork then send, without awaiting: issue order", {
      timeout: 60_000,
    }, async () => {
      const backend = make();
      const ran: string[] = [];
      const gateway = scriptedGateway([
        writeCalls("w"), // its approval is answered, then the turn cancelled before dispatch
        { text: "after compact" },
        { text: "after fork" },
      ]);
      try {
        const { host, threads } = await openAudit(backend, gateway, [writeTool(ran)]);
        const { threadId: id } = await threads.create({ requestKey: "c" });
        await threads.send({ threadId: id, requestKey: "s1", input: { text: "write" } });
        const waiting = await threads.waitForIdle(id, WAIT);
        const interactionId = waiting.pending[0].id;
        const [responded, stopped] = await Promise.all([
          threads.respond({ threadId: id, requestKey: "r", interactionId, decision: "approve" }),
          threads.cancel({ threadId: id, requestKey: "x" }),
        ]);
        // The approval lands first (the turn resumes); the cancel then stops it.
        assert.equal(responded.view.status, "running");
        assert.equal(responded.view.pending.length, 0);
        assert.notEqual(stopped.view.status, "running");
        let view = await threads.waitForIdle(id, WAIT);
        assert.equal(view.turns.at(-1)?.outcome, "cancelled");
        assert.equal(
          view.items.find((i) => i.kind === "tool")?.interaction?.resolution?.decision,
          "approve",
        );

        const [compacted, sent] = await Promise.all([
          threads.compact({ threadId: id, requestKey: "k" }),
          threads.send({ threadId: id, requestKey: "s2", input: { text: "two" } }),
        ]);
        assert.equal(compacted.outcome, "noop", "the compaction saw the thread idle");
        assert.equal(sent.queued, false);
        view = await threads.waitForIdle(id, WAIT);

        const [forked, third] = await Promise.all([
          threads.fork({ threadId: id, requestKey: "f" }),
          threads.send({ threadId: id, requestKey: "s3", input: { text: "three" } }),
        ]);
        assert.equal(third.queued, false);
        assert.deepEqual(
          forked.view.items.map((i) => i.text ?? i.tool?.name),
          view.items.map((i) => i.text ?? i.tool?.name),
          "the fork cut before the message sent after it",
        );
        assert.equal(forked.view.items.at(-1)?.text, "after compact");
        const source = await threads.waitForIdle(id, WAIT);
        assert.deepEqual(source.items.slice(-2).map((i) => i.text), ["three", "after fork"]);
        await host.shutdown();
      } finally {
        backend.dispose();
      }
    });

    test(
      "respond twice at once (same key, then different decisions), fork and delete during runs",
      {
        timeout: 60_000,
      },
      async () => {
        const backend = make();
        const ran: string[] = [];
        const gateway = scriptedGateway([
          writeCalls("one"),
          { text: "after one", delayMs: 30 },
          writeCalls("two"),
          { text: "after two" },
          { hang: true },
        ]);
        try {
          let { host, threads } = await openAudit(backend, gateway, [writeTool(ran)]);
          const { threadId: id } = await threads.create({ requestKey: "c" });
          await threads.send({ threadId: id, requestKey: "s1", input: { text: "go" } });
          let view = await threads.waitForIdle(id, WAIT);
          const approve = {
            threadId: id,
            requestKey: "r",
            interactionId: view.pending[0].id,
            decision: "approve" as const,
          };
          const [ra, rb] = await Promise.all([threads.respond(approve), threads.respond(approve)]);
          assert.equal(ra.view.status, "running");
          assert.equal(rb.view.status, "running");
          // Fork while the run goes on: the cut is the latest item; the copied turn is unfinished.
          const fork = await threads.fork({ threadId: id, requestKey: "f" });
          view = await threads.waitForIdle(id, WAIT);
          assert.deepEqual(ran, ["one"]);
          assert.equal(view.turns.at(-1)?.outcome, "completed");
          const forked = await threads.view(fork.threadId);
          assert.equal(forked.status, "idle");
          assert.equal(forked.turns.at(-1)?.outcome, "interrupted");
          assert.deepEqual(forked.pending, []);

          await threads.send({ threadId: id, requestKey: "s2", input: { text: "again" } });
          view = await threads.waitForIdle(id, WAIT);
          const interactionId = view.pending[0].id;
          const settled = await Promise.allSettled([
            threads.respond({ threadId: id, requestKey: "ra", interactionId, decision: "deny" }),
            threads.respond({ threadId: id, requestKey: "rb", interactionId, decision: "approve" }),
          ]);
          assert.equal(settled.filter((o) => o.status === "fulfilled").length, 1);
          view = await threads.waitForIdle(id, WAIT);
          const denied = settled[0].status === "fulfilled";
          assert.deepEqual(ran, denied ? ["one"] : ["one", "two"]);

          // Delete during a run: the run stops, the thread is gone, here and on a new host.
          await threads.send({
            threadId: fork.threadId,
            requestKey: "s3",
            input: { text: "hang" },
          });
          await Promise.all([
            threads.delete({ threadId: fork.threadId, requestKey: "d" }),
            threads.send({ threadId: fork.threadId, requestKey: "s4", input: { text: "queued?" } })
              .catch(() => undefined),
          ]);
          assert.equal(await codeOf(threads.view(fork.threadId)), "thread_not_found");
          assert.equal(
            await codeOf(
              threads.send({ threadId: fork.threadId, requestKey: "s5", input: { text: "x" } }),
            ),
            "thread_not_found",
          );
          const live = durable(await threads.view(id));
          await host.shutdown();
          ({ host, threads } = await openAudit(backend, gateway, [writeTool(ran)]));
          assert.deepEqual(durable(await threads.view(id)), live);
          assert.equal(await codeOf(threads.view(fork.threadId)), "thread_not_found");
          await threads.delete({ threadId: fork.threadId, requestKey: "d" });
          assert.deepEqual((await threads.list()).threads.map((t) => t.threadId), [id]);
          await host.shutdown();
        } finally {
          backend.dispose();
        }
      },
    );
  });
}
