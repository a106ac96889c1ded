// Audit of request-key scopes (DESIGN §8: create and fork keys are unique per
// store, other keys per thread) across forks, many creates at once, and a
// deferred host (a replay answers without executing; a command refused with
// `execution_deferred` keeps its key free). Memory store and libSQL file.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { defineAgent, type LocalThreadService, openHost } from "@floret/engine";
import { scriptedGateway } from "@floret/engine/testing";
import { BACKENDS, codeOf, durable, openAudit } from "./support/audit_commands.ts";
import { writeCalls, writeTool } from "./support/interactions.ts";

const WAIT = { timeoutMs: 10_000 };

for (const { name, make } of BACKENDS) {
  describe(`request-key scopes (${name})`, () => {
    test("a fork has its own key scope and inherits no pending interaction", {
      timeout: 60_000,
    }, async () => {
      const backend = make();
      const gateway = scriptedGateway([
        { text: "one" },
        writeCalls("w"),
        { text: "fork answer" },
      ]);
      try {
        const { host, threads } = await openAudit(backend, gateway, [writeTool([])]);
        const { threadId: id } = await threads.create({ requestKey: "c" });
        const s1 = await threads.send({ threadId: id, requestKey: "s1", input: { text: "hello" } });
        await threads.waitForIdle(id, WAIT);
        await threads.send({ threadId: id, requestKey: "s2", input: { text: "write" } });
        const waiting = await threads.waitForIdle(id, WAIT);
        const fork = await threads.fork({ threadId: id, requestKey: "f" });
        assert.equal(fork.view.status, "idle");
        assert.deepEqual(fork.view.pending, []);
        assert.deepEqual(fork.view.turns.map((t) => t.outcome), ["completed", "interrupted"]);
        // The source's key is new on the fork: a new turn, not the source's result.
        const onFork = await threads.send({
          threadId: fork.threadId,
          requestKey: "s1",
          input: { text: "other text" },
        });
        assert.notEqual(onFork.turnId, s1.turnId);
        const forked = await threads.waitForIdle(fork.threadId, WAIT);
        assert.deepEqual(forked.items.map((i) => i.text ?? i.tool?.status), [
          "hello",
          "one",
          "write",
          "cancelled",
          "other text",
          "fork answer",
        ]);
        // The source still waits; its interaction is untouched by the fork.
        const source = await threads.view(id);
        assert.equal(source.status, "waiting");
        assert.deepEqual(source.pending.map((p) => p.id), [waiting.pending[0].id]);
        // A store-scoped key and a thread-scoped key of the same name do not meet.
        await threads.setTitle({ threadId: id, requestKey: "f", title: "Source" });
        assert.equal(await codeOf(threads.create({ requestKey: "f" })), "request_conflict");
        await host.shutdown();
      } finally {
        backend.dispose();
      }
    });

    test(
      "50 creates and 20 forks at once under half as many keys",
      { timeout: 60_000 },
      async () => {
        const backend = make();
        const gateway = scriptedGateway([]);
        try {
          let { host, threads } = await openAudit(backend, gateway);
          const created = await Promise.all(
            Array.from({ length: 50 }, (_, i) => threads.create({ requestKey: `k${i % 25}` })),
          );
          assert.equal(new Set(created.map((r) => r.threadId)).size, 25);
          for (let i = 0; i < 25; i++) assert.equal(created[i].threadId, created[i + 25].threadId);
          const forks = await Promise.all(
            Array.from(
              { length: 20 },
              (_, i) =>
                threads.fork({ threadId: created[i % 5].threadId, requestKey: `f${i % 10}` }),
            ),
          );
          assert.equal(new Set(forks.map((f) => f.threadId)).size, 10);
          const listed = (await threads.list({ limit: 500 })).threads.map((t) => t.threadId).sort();
          assert.equal(listed.length, 35);
          await host.shutdown();
          ({ host, threads } = await openAudit(backend, gateway));
          assert.deepEqual(
            (await threads.list({ limit: 500 })).threads.map((t) => t.threadId).sort(),
            listed,
          );
          await host.shutdown();
        } finally {
          backend.dispose();
        }
      },
    );

    test("a deferred host: replays answer, execution is refused without taking the key", {
      timeout: 60_000,
    }, async () => {
      const backend = make();
      const gateway = scriptedGateway([{ text: "ok" }, { text: "after activate" }]);
      const agent = defineAgent({ id: "a", systemPrompt: "s", gateway });
      try {
        let host = await openHost({ store: backend.open() });
        let threads = host.threads({ agent }) as LocalThreadService;
        const { threadId: id } = await threads.create({ requestKey: "c" });
        const s1 = await threads.send({ threadId: id, requestKey: "s1", input: { text: "one" } });
        await threads.waitForIdle(id, WAIT);
        await host.shutdown();

        host = await openHost({ store: backend.open(), deferExecution: true });
        threads = host.threads({ agent }) as LocalThreadService;
        const before = durable(await threads.view(id));
        const replay = await threads.send({
          threadId: id,
          requestKey: "s1",
          input: { text: "one" },
        });
        assert.equal(replay.turnId, s1.turnId);
        assert.equal(
          await codeOf(threads.send({ threadId: id, requestKey: "s2", input: { text: "two" } })),
          "execution_deferred",
        );
        assert.equal(
          await codeOf(threads.retry({ threadId: id, requestKey: "r" })),
          "execution_deferred",
        );
        assert.deepEqual(durable(await threads.view(id)), before, "nothing changed");
        await host.activate();
        const admitted = await threads.send({
          threadId: id,
          requestKey: "s2",
          input: { text: "two" },
        });
        assert.equal(admitted.queued, false);
        const view = await threads.waitForIdle(id, WAIT);
        assert.deepEqual(view.items.map((i) => i.text), ["one", "ok", "two", "after activate"]);
        assert.equal(gateway.requests.length, 2);
        await host.shutdown();
      } finally {
        backend.dispose();
      }
    });
  });
}
