// Audit (round 11) of work that races shutdown, through the public API: a
// waitForIdle or subscription pending when shutdown comes, a send or respond
// that passed its open check as shutdown began, and a queue hand-over being
// committed while shutdown stops the run. Nothing runs after shutdown, and a
// new host on the same store shows each turn settled or still waiting.
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import {
  defineTool,
  type Gateway,
  type Host,
  type KvStore,
  memoryStore,
  openHost,
  type ProviderEvent,
  type ThreadView,
} from "@floret/engine";
import { scriptedGateway } from "@floret/engine/testing";
import { TIMEOUT, watchdog } from "./support/robust.ts";
import { agentOf, backing, removeBackings, WATCHDOG_MS } from "./support/audit_shutdown.ts";

after(removeBackings);

describe("audit lifecycle: calls waiting when shutdown comes", () => {
  test(
    "a waitForIdle pending at shutdown rejects host_closed, with or without a timeout",
    TIMEOUT,
    async () => {
      await watchdog(WATCHDOG_MS, async () => {
        const host = await openHost({ store: memoryStore() });
        const threads = host.threads({
          agent: agentOf(scriptedGateway([{ hang: true }])),
        });
        const { threadId } = await threads.create({ requestKey: "c" });
        await threads.send({ threadId, requestKey: "s", input: { text: "go" } });
        const settle = (wait: Promise<ThreadView>) =>
          wait.then((view) => `resolved ${view.status}`, (error) => `rejected ${error.code}`);
        const plain = settle(threads.waitForIdle(threadId));
        const timed = settle(threads.waitForIdle(threadId, { timeoutMs: 60_000 }));
        const signalled = settle(
          threads.waitForIdle(threadId, { signal: new AbortController().signal }),
        );
        const ended = (async () => {
          let batches = 0;
          for await (const _ of threads.subscribe(threadId)) batches++;
          return batches;
        })();
        await host.shutdown();
        // The run was stopped, not settled: the thread is not idle, and the host is closed.
        assert.deepEqual(await Promise.all([plain, timed, signalled]), [
          "rejected host_closed",
          "rejected host_closed",
          "rejected host_closed",
        ]);
        assert.equal(typeof await ended, "number", "shutdown ends every subscription");
      });
    },
  );
});

describe("audit lifecycle: commands racing shutdown", () => {
  for (const kind of ["memory", "libsql"] as const) {
    test(
      `a send in flight when shutdown starts runs nothing after it (${kind})`,
      TIMEOUT,
      async () => {
        await watchdog(WATCHDOG_MS, async () => {
          const open = backing(kind);
          const gateway = scriptedGateway([{ hang: true }]);
          const host = await openHost({ store: open() });
          const threads = host.threads({ agent: agentOf(gateway) });
          const { threadId } = await threads.create({ requestKey: "c" });
          const sent = threads.send({ threadId, requestKey: "s", input: { text: "go" } }).then(
            (result) => `admitted ${result.queued ? "queued" : "running"}`,
            (error) => `rejected ${error.code}`,
          );
          // The send has passed its open check; shutdown begins before it commits.
          await Promise.resolve();
          await host.shutdown();
          const outcome = await sent;
          assert.ok(
            ["admitted running", "rejected host_closed", "rejected storage_failure"].includes(
              outcome,
            ),
            outcome,
          );
          await new Promise((resolve) => setTimeout(resolve, 50));
          assert.equal(gateway.requests.length, 0, "a run started after shutdown called the model");
          const again = await openHost({ store: open() });
          try {
            const view = await again.threads({ agent: agentOf(scriptedGateway([])) }).view(
              threadId,
            );
            assert.equal(view.status, "idle");
            const admitted = outcome === "admitted running";
            assert.deepEqual(
              view.turns.map((turn) => turn.outcome),
              admitted ? ["interrupted"] : [],
            );
          } finally {
            await again.shutdown();
          }
        });
      },
    );
  }
});

describe("audit lifecycle: a respond racing shutdown", () => {
  test(
    "an approval given as shutdown begins runs no tool and no model call after it",
    TIMEOUT,
    async () => {
      await watchdog(WATCHDOG_MS, async () => {
        const open = backing("memory");
        let ran = 0;
        const guarded = defineTool({
          name: "guarded",
          description: "Needs approval",
          input: z.object({}),
          effect: "write",
          permission: "ask",
          execute: () => {
            ran++;
            return "written";
          },
        });
        const gateway = scriptedGateway([
          { toolCalls: [{ name: "guarded", arguments: {}, callId: "g1" }] },
          { text: "done" },
        ]);
        const host = await openHost({ store: open() });
        const threads = host.threads({ agent: agentOf(gateway, [guarded]) });
        const { threadId } = await threads.create({ requestKey: "c" });
        await threads.send({ threadId, requestKey: "s", input: { text: "go" } });
        const waiting = await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
        const responded = threads.respond({
          threadId,
          requestKey: "yes",
          interactionId: waiting.pending[0].id,
          decision: "approve",
        }).then((result) => `resolved ${result.view.status}`, (error) => `rejected ${error.code}`);
        // The respond has passed its open check; shutdown begins before its run starts.
        await Promise.resolve();
        await host.shutdown();
        const outcome = await responded;
        await new Promise((resolve) => setTimeout(resolve, 100));
        assert.equal(ran, 0, `the approved write ran after shutdown (${outcome})`);
        assert.equal(gateway.requests.length, 1);
        const again = await openHost({ store: open() });
        try {
          const view = await again.threads({ agent: agentOf(scriptedGateway([]), [guarded]) })
            .view(threadId);
          const tool = view.items.find((item) => item.kind === "tool")?.tool;
          if (outcome === "rejected host_closed") {
            assert.equal(view.status, "waiting");
            assert.equal(tool?.status, "waiting_approval");
          } else {
            assert.equal(outcome, "resolved running");
            // Approved, never dispatched: nothing happened, so the call is cancelled and retryable.
            assert.equal(view.status, "idle");
            assert.equal(tool?.status, "cancelled");
            assert.equal(view.turns.at(-1)?.outcome, "interrupted");
          }
        } finally {
          await again.shutdown();
        }
      });
    },
  );
});

describe("audit lifecycle: shutdown during a queue hand-over", () => {
  test("a turn handed over while shutdown stops the run makes no model call", TIMEOUT, async () => {
    await watchdog(WATCHDOG_MS, async () => {
      // A store whose commits take a while once `slow` is set, kept open across hosts.
      const inner = memoryStore();
      let slow = false;
      const store: KvStore = {
        ...inner,
        close: () => Promise.resolve(),
        commit: async (op) => {
          if (slow) await new Promise((resolve) => setTimeout(resolve, 30));
          return await inner.commit(op);
        },
      };
      // The gateway shuts the host down; it learns the host once it is open.
      const opened: { host?: Host } = {};
      let shut: Promise<void> | undefined;
      const asked: string[] = [];
      let releaseFirst!: () => void;
      const firstHeld = new Promise<void>((resolve) => (releaseFirst = resolve));
      const gateway: Gateway = {
        info: { provider: "handover", model: "m", stateKey: "handover:m", capabilities: {} },
        async *stream(request): AsyncIterable<ProviderEvent> {
          const last = request.messages.at(-1);
          asked.push(last?.role === "user" ? last.text : "?");
          if (asked.length === 1) await firstHeld;
          yield { type: "text", delta: `answer ${asked.length}` };
          if (asked.length === 1) {
            // Shutdown comes while the turn's end (and the hand-over) is being committed.
            slow = true;
            setTimeout(() => (shut = opened.host!.shutdown()), 5);
          }
          yield { type: "finish", reason: "stop" };
        },
      };
      const host = opened.host = await openHost({ store });
      const threads = host.threads({ agent: agentOf(gateway) });
      const { threadId } = await threads.create({ requestKey: "c" });
      await threads.send({ threadId, requestKey: "s1", input: { text: "one" } });
      const queued = await threads.send({ threadId, requestKey: "s2", input: { text: "two" } });
      assert.equal(queued.queued, true);
      releaseFirst();
      for (let i = 0; i < 4000 && shut === undefined; i++) {
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      await shut;
      await new Promise((resolve) => setTimeout(resolve, 100));
      assert.deepEqual(asked, ["one"], "a turn started after shutdown called the model");
      slow = false;
      const again = await openHost({ store });
      try {
        const view = await again.threads({ agent: agentOf(scriptedGateway([])) }).view(threadId);
        assert.equal(view.status, "idle");
        assert.notEqual(view.turns[1]?.outcome, "completed");
        assert.equal(view.items.some((item) => item.text === "answer 2"), false);
      } finally {
        await again.shutdown();
      }
    });
  });
});
