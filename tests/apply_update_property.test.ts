/**
 * `applyUpdate` is the one reducer of update batches: for random
 * conversations (streamed text and reasoning, tool calls, approvals granted
 * or denied, questions, failed attempts whose live text is dropped, queued
 * input), every batch applied in order to the view read after subscribing
 * gives, at each version, exactly what `view()` returned at that version.
 * Also its edges: stale batches, gaps, resync, purity.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { z } from "zod";
import {
  applyUpdate,
  defineAgent,
  defineTool,
  type Gateway,
  isFloretError,
  memoryStore,
  openHost,
  ProviderError,
  type ThreadUpdate,
  type ThreadView,
} from "@floret/engine";
import { scriptedGateway, type ScriptStep } from "@floret/engine/testing";

type Move =
  | { kind: "text"; text: string; reasoning: boolean }
  | { kind: "add" }
  | { kind: "write"; approve: boolean }
  | { kind: "ask" }
  | { kind: "flaky" };

const move: fc.Arbitrary<Move> = fc.oneof(
  fc.record({
    kind: fc.constant("text" as const),
    text: fc.string({ minLength: 1, maxLength: 12, unit: "grapheme" }),
    reasoning: fc.boolean(),
  }),
  fc.record({ kind: fc.constant("add" as const) }),
  fc.record({ kind: fc.constant("write" as const), approve: fc.boolean() }),
  fc.record({ kind: fc.constant("ask" as const) }),
  fc.record({ kind: fc.constant("flaky" as const) }),
);
/** Turns: each a few moves before its final answer; `queue` sends the next one while it runs. */
const turns = fc.array(
  fc.record({ moves: fc.array(move, { maxLength: 4 }), queue: fc.boolean() }),
  { minLength: 1, maxLength: 3 },
);

const FLAKY = "__flaky__";

/**
 * The scripted gateway, except that a `flaky` step streams some text and then
 * fails with a retryable error once (the engine drops the live text), before
 * its retry plays the next scripted step.
 */
function flakyGateway(steps: ScriptStep[]): Gateway {
  const inner = scriptedGateway(steps.filter((step) => !("text" in step && step.text === FLAKY)));
  const flaky = steps.map((step) => "text" in step && step.text === FLAKY);
  let played = 0;
  return {
    info: inner.info,
    async *stream(request, options) {
      if (flaky[played]) {
        played++;
        yield { type: "text", delta: "partial answer" };
        yield { type: "reasoning", delta: "partial thought" };
        throw new ProviderError("flaky", { retry: "retryable", status: 503 });
      }
      played++;
      yield* inner.stream(request, options);
    },
  };
}

function script(plan: { moves: Move[] }[]): ScriptStep[] {
  const steps: ScriptStep[] = [];
  for (const [turn, { moves }] of plan.entries()) {
    for (const [i, m] of moves.entries()) {
      if (m.kind === "text") {
        steps.push({
          toolCalls: [{ name: "add", arguments: { a: i, b: turn } }],
          text: m.text,
        });
      } else if (m.kind === "add") {
        steps.push({ toolCalls: [{ name: "add", arguments: { a: 1, b: 2 } }] });
      } else if (m.kind === "write") {
        steps.push({ toolCalls: [{ name: "write", arguments: { line: `l${turn}.${i}` } }] });
      } else if (m.kind === "ask") {
        steps.push({
          toolCalls: [{ name: "ask_user", arguments: { questions: [{ id: "q", prompt: "Q?" }] } }],
        });
      } else steps.push({ text: FLAKY });
    }
    steps.push({ text: `answer ${turn} é🌼`, reasoning: `because ${turn}` });
  }
  return steps;
}

test("applyUpdate folds every batch into the view() of each version", async () => {
  await fc.assert(
    fc.asyncProperty(turns, async (plan) => {
      const approvals = plan.flatMap((turn) =>
        turn.moves.flatMap((m) => m.kind === "write" ? [m.approve] : [])
      );
      const host = await openHost({ store: memoryStore() });
      const add = defineTool({
        name: "add",
        description: "Add",
        input: z.object({ a: z.number(), b: z.number() }),
        execute: ({ a, b }) => String(a + b),
      });
      const write = defineTool({
        name: "write",
        description: "Write",
        effect: "write",
        permission: "ask",
        input: z.object({ line: z.string() }),
        execute: ({ line }) => `wrote ${line}`,
      });
      const threads = host.threads({
        agent: defineAgent({
          id: "prop",
          systemPrompt: "Test.",
          gateway: flakyGateway(script(plan)),
          tools: [add, write],
          providerRetry: { delaysMs: [1, 1, 1] },
          maxSteps: 20,
        }),
      });
      const { threadId } = await threads.create({ requestKey: "create" });
      const controller = new AbortController();
      const updates = threads.subscribe(threadId, { signal: controller.signal });
      const start = await threads.view(threadId);
      const snapshots = new Map<number, ThreadView>([[start.viewVersion, start]]);
      const batches: ThreadUpdate[] = [];
      const collecting = (async () => {
        for await (const update of updates) batches.push(update);
      })();
      const snapshot = async () => {
        const view = await threads.view(threadId);
        snapshots.set(view.viewVersion, view);
        return view;
      };

      let sent = 0;
      const send = () =>
        threads.send({ threadId, requestKey: `send-${sent}`, input: { text: `turn ${sent++}` } });
      await send();
      let guard = 0;
      while (guard++ < 60) {
        if (sent < plan.length && plan[sent - 1]!.queue) await send();
        const view = await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
        await snapshot();
        const pending = view.pending[0];
        if (pending?.kind === "approval") {
          await threads.respond({
            threadId,
            requestKey: `r-${pending.id}`,
            interactionId: pending.id,
            decision: approvals.shift() === false ? "deny" : "approve",
          });
        } else if (pending?.kind === "input") {
          await threads.respond({
            threadId,
            requestKey: `r-${pending.id}`,
            interactionId: pending.id,
            answers: pending.questions.map((q) => ({ questionId: q.id, value: "yes" })),
          });
        } else if (view.queue.length === 0 && sent < plan.length) await send();
        else if (view.queue.length === 0) break;
        await snapshot();
      }
      const final = await snapshot();
      // Every batch up to the final version has been handed to the subscriber by now.
      await new Promise((resolve) => setTimeout(resolve, 0));
      controller.abort();
      await collecting;

      assert.ok(batches.every((update) => update.type === "batch"), "no resync expected");
      let view = start;
      let compared = 1;
      for (const update of batches) {
        const before = structuredClone(view);
        view = applyUpdate(view, update);
        assert.deepEqual(before, structuredClone(before), "the input view is not changed");
        const expected = snapshots.get(view.viewVersion);
        if (expected && update.type === "batch" && update.version === view.viewVersion) {
          assert.deepEqual(view, expected, `at version ${view.viewVersion}`);
          compared++;
        }
      }
      assert.equal(view.viewVersion, final.viewVersion);
      assert.deepEqual(view, final);
      assert.ok(compared >= 2);
      await host.shutdown();
    }),
    { numRuns: 25 },
  );
});

test("applyUpdate: stale batches change nothing, gaps and resync are refused, the input is kept", () => {
  const view: ThreadView = {
    threadId: "t",
    titleStatus: "none",
    titleGeneration: 0,
    status: "idle",
    items: [
      {
        id: "a",
        ordinal: 0,
        kind: "user",
        turnId: "u",
        createdAt: "2026-01-01T00:00:00Z",
        text: "hi",
      },
      {
        id: "b",
        ordinal: 1,
        kind: "assistant",
        turnId: "u",
        createdAt: "2026-01-01T00:00:00Z",
        text: "hé",
        live: true,
      },
      {
        id: "c",
        ordinal: 2,
        kind: "user",
        turnId: "u",
        createdAt: "2026-01-01T00:00:00Z",
        text: "x",
      },
    ],
    pending: [],
    queue: [],
    turns: [],
    todos: [],
    title: "old",
    viewVersion: 3,
  };
  const copy = structuredClone(view);
  assert.equal(applyUpdate(view, { type: "batch", baseVersion: 2, version: 3, ops: [] }), view);
  const next = applyUpdate(view, {
    type: "batch",
    baseVersion: 3,
    version: 4,
    ops: [
      { op: "append-text", itemId: "b", offset: 3, text: "llo" },
      // The same append again (a view that already had it): it lands at its offset once.
      { op: "append-text", itemId: "b", offset: 3, text: "llo" },
      { op: "remove", itemId: "a" },
      { op: "component", name: "status", value: "running" },
      { op: "component", name: "title", value: null },
      {
        op: "component",
        name: "runProgress",
        value: { turnId: "u", runId: "r", step: 1, phase: "model" },
      },
      { op: "component", name: "titleState", value: { titleStatus: "ready", titleGeneration: 2 } },
    ],
  });
  assert.deepEqual(view, copy, "the input view is unchanged");
  assert.deepEqual(next.items.map((item) => [item.id, item.ordinal, item.text]), [
    ["b", 0, "héllo"],
    ["c", 1, "x"],
  ]);
  assert.equal(next.status, "running");
  assert.equal("title" in next, false);
  assert.deepEqual(next.runProgress, { turnId: "u", runId: "r", step: 1, phase: "model" });
  assert.equal(next.titleStatus, "ready");
  assert.equal(next.titleGeneration, 2);
  assert.equal(next.viewVersion, 4);
  assert.throws(
    () => applyUpdate(view, { type: "batch", baseVersion: 5, version: 6, ops: [] }),
    (error) =>
      isFloretError(error) && error.code === "invalid_input" && /missed/.test(error.message),
  );
  assert.throws(
    () => applyUpdate(view, { type: "resync", reason: "subscriber fell behind" }),
    (error) =>
      isFloretError(error) && error.code === "invalid_input" && /view\(\)/.test(error.message),
  );
});
