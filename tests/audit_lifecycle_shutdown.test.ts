// Audit (round 11) of shutdown and the restart after it, through the public
// API, on a libSQL file and on a memory store kept open across hosts:
// shutdown during a tool call (write and read effects, handlers that ignore
// their signal), during a provider stream that ignores abort, during a
// pending approval or question, with queued input, with and without a
// signal. Shutdown returns; afterwards every call is `host_closed`; the
// abandoned work's late results change nothing; a new host on the same store
// settles each turn as DESIGN §8 "Restart recovery" says and nothing resumes
// by itself.
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import {
  type Agent,
  defineAgent,
  defineTool,
  type Gateway,
  type Host,
  type KvStore,
  memoryStore,
  openHost,
  type ProviderEvent,
  type ThreadService,
  type ThreadView,
  type ToolDefinition,
} from "@floret/engine";
import { libsqlStore } from "@floret/engine/libsql";
import { scriptedGateway, type ScriptStep } from "@floret/engine/testing";
import { rejectsWith, TIMEOUT, watchdog } from "./support/robust.ts";

const WATCHDOG_MS = 20_000;
const dir = mkdtempSync(join(tmpdir(), "floret-audit-shutdown-"));
after(() => rmSync(dir, { recursive: true, force: true }));
let dbs = 0;

/** Opens stores on one backing: a libSQL file, or one memory store whose close does nothing. */
function backing(kind: "libsql" | "memory"): () => KvStore {
  if (kind === "libsql") {
    const url = `file:${join(dir, `shutdown-${++dbs}.db`)}`;
    return () => libsqlStore({ url });
  }
  const inner = memoryStore();
  return () => ({ ...inner, close: () => Promise.resolve() });
}

/** A tool held open by the test that never reads its signal. */
function heldTool(name: string, effect: "read" | "write", permission: "allow" | "ask" = "allow") {
  const runs: string[] = [];
  let release: (output: string) => void = () => {};
  let startedResolve!: () => void;
  const started = new Promise<void>((resolve) => (startedResolve = resolve));
  const tool = defineTool({
    name,
    description: "Held by the test",
    input: z.object({}),
    effect,
    permission,
    execute: (_input, context) => {
      runs.push(context.callId);
      startedResolve();
      return new Promise<string>((resolve) => (release = resolve));
    },
  });
  return { tool, runs, started, release: (output: string) => release(output) };
}

/** Streams `partial`, then never answers and ignores its abort signal. */
function deafAfterText(partial: string): Gateway & { attempts: () => number } {
  let attempts = 0;
  return {
    info: { provider: "deaf", model: "m", stateKey: "deaf:m", capabilities: {} },
    attempts: () => attempts,
    stream(): AsyncIterable<ProviderEvent> {
      attempts++;
      let sent = false;
      return {
        [Symbol.asyncIterator]: () => ({
          next(): Promise<IteratorResult<ProviderEvent>> {
            if (sent) return new Promise(() => {});
            sent = true;
            return Promise.resolve({ done: false, value: { type: "text", delta: partial } });
          },
        }),
      };
    },
  };
}

const agentOf = (gateway: Gateway, tools: ToolDefinition[] = []): Agent =>
  defineAgent({ id: "audit-shutdown", systemPrompt: "Audit.", gateway, tools });

async function until(
  threads: ThreadService,
  threadId: string,
  done: (view: ThreadView) => boolean,
): Promise<ThreadView> {
  for (let i = 0; i < 2_000; i++) {
    const view = await threads.view(threadId);
    if (done(view)) return view;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error("the condition never held");
}

/** How shutdown is bounded: no signal, a signal aborted shortly after, or one aborted already. */
type SignalMode = "no signal" | "a signal" | "an aborted signal";

/** Shuts down in `mode`. */
async function shutdownWith(host: Host, mode: SignalMode): Promise<void> {
  if (mode === "no signal") return await host.shutdown();
  const controller = new AbortController();
  if (mode === "an aborted signal") controller.abort();
  const timer = setTimeout(() => controller.abort(), 100);
  try {
    await host.shutdown({ signal: controller.signal });
  } finally {
    clearTimeout(timer);
  }
}

/** Every public call of a shut-down host is host_closed. */
async function assertClosed(host: Host, threads: ThreadService, threadId: string): Promise<void> {
  await rejectsWith(threads.view(threadId), "host_closed");
  await rejectsWith(
    threads.send({ threadId, requestKey: "after", input: { text: "after" } }),
    "host_closed",
  );
  await rejectsWith(threads.cancel({ threadId, requestKey: "after-cancel" }), "host_closed");
  await rejectsWith(threads.create({ requestKey: "after-create" }), "host_closed");
  await rejectsWith(() => host.threads({ agent: agentOf(scriptedGateway([])) }), "host_closed");
  await rejectsWith(threads.waitForIdle(threadId), "host_closed");
  await rejectsWith(threads.history(threadId), "host_closed");
  await rejectsWith(threads.list(), "host_closed");
  await rejectsWith(host.activate(), "host_closed");
  await rejectsWith(async () => {
    for await (const _ of threads.subscribe(threadId)) break;
  }, "host_closed");
  // A second shutdown is the same finished shutdown.
  await host.shutdown();
}

const tools = (view: ThreadView) => view.items.filter((item) => item.kind === "tool");

for (const kind of ["libsql", "memory"] as const) {
  for (const withSignal of ["no signal", "a signal", "an aborted signal"] as const) {
    const label = `${kind}, with ${withSignal}`;
    describe(`audit lifecycle: shutdown and restart (${label})`, () => {
      test(
        "during a write tool that ignores its signal: unknown after restart, its late result lost",
        TIMEOUT,
        async () => {
          await watchdog(WATCHDOG_MS, async () => {
            const open = backing(kind);
            const held = heldTool("write_it", "write");
            const first = await openHost({ store: open() });
            const threads = first.threads({
              agent: agentOf(
                scriptedGateway([{
                  toolCalls: [{ name: "write_it", arguments: {}, callId: "w1" }],
                }]),
                [held.tool],
              ),
            });
            const { threadId } = await threads.create({ requestKey: "c" });
            await threads.send({ threadId, requestKey: "s", input: { text: "write" } });
            await held.started;
            await shutdownWith(first, withSignal);
            await assertClosed(first, threads, threadId);
            const gateway = scriptedGateway([{ text: "never asked" }]);
            const second = await openHost({ store: open() });
            try {
              const service = second.threads({ agent: agentOf(gateway, [held.tool]) });
              const view = await service.view(threadId);
              assert.equal(view.status, "idle");
              assert.deepEqual(tools(view).map((item) => item.tool?.status), ["unknown"]);
              assert.equal(view.turns.at(-1)?.outcome, "failed");
              assert.equal(view.turns.at(-1)?.failure?.code, "effect_outcome_unknown");
              // The old handler answers now: its host is closed, nothing lands.
              held.release("late result");
              await new Promise((resolve) => setTimeout(resolve, 50));
              const later = await service.view(threadId);
              assert.deepEqual(later.items, view.items);
              assert.deepEqual(later.turns, view.turns);
              await rejectsWith(service.retry({ threadId, requestKey: "r" }), "no_retry_target");
              assert.deepEqual(held.runs, ["w1"], "the write ran once");
              assert.equal(gateway.requests.length, 0, "nothing resumes by itself");
            } finally {
              held.release("x");
              await second.shutdown();
            }
          });
        },
      );

      test(
        "during a read tool: the call is cancelled, the turn interrupted, retry runs it again",
        TIMEOUT,
        async () => {
          await watchdog(WATCHDOG_MS, async () => {
            const open = backing(kind);
            const held = heldTool("read_it", "read");
            const first = await openHost({ store: open() });
            const threads = first.threads({
              agent: agentOf(
                scriptedGateway([{
                  toolCalls: [{ name: "read_it", arguments: {}, callId: "r1" }],
                }]),
                [held.tool],
              ),
            });
            const { threadId } = await threads.create({ requestKey: "c" });
            await threads.send({ threadId, requestKey: "s", input: { text: "read" } });
            await held.started;
            await shutdownWith(first, withSignal);
            held.release("late read");
            const rerun = heldTool("read_it", "read");
            // The resumed model sees its cut-off call as an error result and calls again.
            const gateway = scriptedGateway([
              { toolCalls: [{ name: "read_it", arguments: {}, callId: "r2" }] },
              { text: "read done" },
            ]);
            const second = await openHost({ store: open() });
            try {
              const service = second.threads({ agent: agentOf(gateway, [rerun.tool]) });
              const view = await service.view(threadId);
              assert.equal(view.status, "idle");
              assert.deepEqual(tools(view).map((item) => item.tool?.status), ["cancelled"]);
              assert.equal(view.turns.at(-1)?.outcome, "interrupted");
              assert.equal(view.turns.at(-1)?.failure?.code, "interrupted");
              assert.equal(gateway.requests.length, 0, "nothing resumes by itself");
              await service.retry({ threadId, requestKey: "r" });
              await rerun.started;
              rerun.release("read again");
              const done = await service.waitForIdle(threadId, { timeoutMs: 10_000 });
              assert.equal(done.turns.at(-1)?.outcome, "completed");
              assert.deepEqual(rerun.runs, ["r2"], "the read ran again");
              assert.deepEqual(tools(done).map((item) => item.tool?.status), [
                "cancelled",
                "completed",
              ]);
              const cutOff = gateway.requests[0].messages.find((m) =>
                m.role === "tool" && m.callId === "r1"
              );
              assert.equal(cutOff?.role === "tool" && cutOff.isError, true);
              assert.equal(done.items.at(-1)?.text, "read done");
            } finally {
              rerun.release("x");
              await second.shutdown();
            }
          });
        },
      );

      test(
        "during a stream that ignores abort: interrupted after restart, streamed text not live",
        TIMEOUT,
        async () => {
          await watchdog(WATCHDOG_MS, async () => {
            const open = backing(kind);
            const deaf = deafAfterText("half an ans");
            const first = await openHost({ store: open() });
            const threads = first.threads({ agent: agentOf(deaf) });
            const { threadId } = await threads.create({ requestKey: "c" });
            await threads.send({ threadId, requestKey: "s", input: { text: "talk" } });
            await until(threads, threadId, (view) => view.items.some((item) => item.live));
            // Queued behind the running turn: it must not start by itself after the restart.
            const queued = await threads.send({
              threadId,
              requestKey: "q",
              input: { text: "next" },
            });
            assert.equal(queued.queued, true);
            await shutdownWith(first, withSignal);
            const gateway = scriptedGateway([{ text: "whole answer" }, { text: "next answer" }]);
            const second = await openHost({ store: open() });
            try {
              const service = second.threads({ agent: agentOf(gateway) });
              const view = await service.view(threadId);
              assert.equal(view.status, "idle");
              assert.equal(view.turns.length, 1);
              assert.equal(view.turns[0].outcome, "interrupted");
              assert.equal(view.items.some((item) => item.live), false);
              assert.deepEqual(view.queue.map((input) => input.text), ["next"]);
              assert.equal(gateway.requests.length, 0, "nothing resumes by itself");
              assert.equal(deaf.attempts(), 1);
              await service.retry({ threadId, requestKey: "r" });
              const done = await service.waitForIdle(threadId, { timeoutMs: 10_000 });
              assert.equal(done.turns.at(-1)?.outcome, "completed");
              // The retried turn completes and hands over to the queued input.
              assert.deepEqual(done.queue, []);
              assert.deepEqual(
                done.items.filter((item) => item.kind === "assistant").map((item) => item.text),
                ["whole answer", "next answer"],
              );
            } finally {
              await second.shutdown();
            }
          });
        },
      );

      test(
        "during a pending approval and a pending question: both stay pending with their ids",
        TIMEOUT,
        async () => {
          await watchdog(WATCHDOG_MS, async () => {
            const open = backing(kind);
            const ran: string[] = [];
            const guarded = defineTool({
              name: "guarded",
              description: "Needs approval",
              input: z.object({}),
              effect: "write",
              permission: "ask",
              execute: (_input, context) => {
                ran.push(context.callId);
                return "written";
              },
            });
            const steps: ScriptStep[] = [
              { toolCalls: [{ name: "guarded", arguments: {}, callId: "g1" }] },
              {
                toolCalls: [{
                  name: "ask_user",
                  arguments: { questions: [{ id: "city", prompt: "Which city?" }] },
                  callId: "q1",
                }],
              },
            ];
            const first = await openHost({ store: open() });
            const threads = first.threads({ agent: agentOf(scriptedGateway(steps), [guarded]) });
            const approval = (await threads.create({ requestKey: "c1" })).threadId;
            const question = (await threads.create({ requestKey: "c2" })).threadId;
            await threads.send({ threadId: approval, requestKey: "s", input: { text: "write" } });
            const waitingA = await threads.waitForIdle(approval, { timeoutMs: 10_000 });
            await threads.send({ threadId: question, requestKey: "s", input: { text: "ask" } });
            const waitingQ = await threads.waitForIdle(question, { timeoutMs: 10_000 });
            assert.equal(waitingA.status, "waiting");
            assert.equal(waitingQ.status, "waiting");
            await shutdownWith(first, withSignal);
            const gateway = scriptedGateway([{ text: "approved and done" }, {
              text: "Paris it is",
            }]);
            const second = await openHost({ store: open() });
            try {
              const service = second.threads({ agent: agentOf(gateway, [guarded]) });
              const a = await service.view(approval);
              const q = await service.view(question);
              assert.equal(a.status, "waiting");
              assert.equal(q.status, "waiting");
              assert.deepEqual(a.pending.map((p) => p.id), waitingA.pending.map((p) => p.id));
              assert.deepEqual(q.pending.map((p) => p.id), waitingQ.pending.map((p) => p.id));
              assert.deepEqual(a.turns.map((turn) => turn.outcome), [undefined]);
              assert.equal(gateway.requests.length, 0);
              await service.respond({
                threadId: approval,
                requestKey: "yes",
                interactionId: a.pending[0].id,
                decision: "approve",
              });
              const doneA = await service.waitForIdle(approval, { timeoutMs: 10_000 });
              assert.equal(doneA.turns.at(-1)?.outcome, "completed");
              assert.deepEqual(ran, ["g1"]);
              await service.respond({
                threadId: question,
                requestKey: "answer",
                interactionId: q.pending[0].id,
                answers: [{ questionId: "city", value: "Paris" }],
              });
              const doneQ = await service.waitForIdle(question, { timeoutMs: 10_000 });
              assert.equal(doneQ.turns.at(-1)?.outcome, "completed");
              assert.equal(doneQ.items.at(-1)?.text, "Paris it is");
            } finally {
              await second.shutdown();
            }
          });
        },
      );
    });
  }
}

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
      for (let i = 0; i < 400 && shut === undefined; i++) {
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
