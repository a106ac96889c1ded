// Audit (round 11) of shutdown and the restart after it, through the public
// API, on a libSQL file and on a memory store kept open across hosts:
// shutdown during a tool call (write and read effects, handlers that ignore
// their signal), during a provider stream that ignores abort, during a
// pending approval or question, with queued input, with and without a
// signal. Shutdown returns; afterwards every call is `host_closed`; the
// abandoned work's late results change nothing; a new host on the same store
// settles each turn as DESIGN §8 "Restart recovery" says and nothing resumes
// by itself.
// (Work that races shutdown: audit_lifecycle_shutdown_races.test.ts.)
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import { defineTool, openHost } from "@floret/engine";
import { scriptedGateway, type ScriptStep } from "@floret/engine/testing";
import { rejectsWith, TIMEOUT, watchdog } from "./support/robust.ts";
import {
  agentOf,
  assertClosed,
  backing,
  deafAfterText,
  heldTool,
  removeBackings,
  shutdownWith,
  tools,
  until,
  WATCHDOG_MS,
} from "./support/audit_shutdown.ts";

after(removeBackings);

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
            // Retry runs the cut-off call again before the model's first request.
            const gateway = scriptedGateway([{ text: "read done" }]);
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
              assert.deepEqual(rerun.runs, ["r1"], "the read ran again, under its own call id");
              assert.deepEqual(tools(done).map((item) => item.tool?.status), ["completed"]);
              const cutOff = gateway.requests[0].messages.find((m) =>
                m.role === "tool" && m.callId === "r1"
              );
              assert.equal(cutOff?.role === "tool" && cutOff.output, "read again");
              assert.equal(cutOff?.role === "tool" && cutOff.isError, undefined);
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
