/**
 * Issue 8, cause 1 (host code inside a run) and cause 5 (duplicate call ids):
 * whatever host code throws becomes the call's error result and the turn goes
 * on; whatever else breaks ends the turn `engine_contract`. Never `running`
 * with nothing running.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import {
  defineAgent,
  defineTool,
  memoryStore,
  openHost,
  type ProviderEvent,
  type ThreadView,
} from "@floret/engine";
import { engine, lastTurn, sendAndWait } from "./support/engine.ts";
import {
  answerEvents,
  callEvents,
  faultyStore,
  misbehavingGateway,
  TIMEOUT,
  watchdog,
} from "./support/robust.ts";

const WATCHDOG_MS = 15_000;
const tools = (view: ThreadView) =>
  view.items.filter((item) => item.kind === "tool").map((item) => item.tool!);

/** A tool whose handler does `behave`, then a final answer. */
async function oneCall(
  behave: (input: { n: number }) => unknown,
  options: { arguments?: unknown; input?: z.ZodType; permission?: unknown } = {},
) {
  const probe = defineTool({
    name: "probe",
    description: "Misbehaves",
    input: (options.input ?? z.object({ n: z.number() })) as z.ZodType<{ n: number }>,
    permission: options.permission as never,
    execute: (input) => behave(input) as string,
  });
  const e = await engine([
    { toolCalls: [{ name: "probe", arguments: options.arguments ?? { n: 1 } }] },
    { text: "went on" },
  ], { tools: [probe] });
  const view = await sendAndWait(e, "go");
  return { e, view };
}

describe("robustness: host code inside a run", () => {
  const thrownValues: [string, () => unknown][] = [
    ["a string", () => "plain string"],
    ["a number", () => 42],
    ["undefined", () => undefined],
    ["null", () => null],
    ["a symbol", () => Symbol("odd")],
    ["an object without prototype", () => Object.create(null)],
    ["a circular object", () => {
      const o: Record<string, unknown> = {};
      o.self = o;
      return o;
    }],
    ["a Proxy whose traps throw", () =>
      new Proxy({}, {
        get() {
          throw new Error("trap");
        },
        getPrototypeOf() {
          throw new Error("trap");
        },
        ownKeys() {
          throw new Error("trap");
        },
      })],
    ["an Error whose message getter throws", () => {
      const error = new Error("x");
      Object.defineProperty(error, "message", {
        get() {
          throw new Error("getter");
        },
      });
      return error;
    }],
  ];
  for (const [name, make] of thrownValues) {
    test(
      `a handler throwing ${name} gives an error result; the turn completes`,
      TIMEOUT,
      async () => {
        await watchdog(WATCHDOG_MS, async () => {
          const { e, view } = await oneCall(() => {
            throw make();
          });
          assert.equal(view.status, "idle");
          assert.deepEqual(tools(view).map((t) => t.status), ["error"]);
          assert.deepEqual(lastTurn(view), { outcome: "completed", code: undefined });
          assert.equal(view.items.at(-1)?.text, "went on");
          await e.host.shutdown();
        });
      },
    );
  }

  test("a handler rejecting with a non-Error value gives an error result", TIMEOUT, async () => {
    await watchdog(WATCHDOG_MS, async () => {
      const { e, view } = await oneCall(() => Promise.reject(7));
      assert.deepEqual(tools(view).map((t) => t.status), ["error"]);
      assert.equal(lastTurn(view).outcome, "completed");
      await e.host.shutdown();
    });
  });

  for (
    const [name, structured, status] of [
      ["plain JSON", { a: [1, "two", null], b: { c: true } }, "completed"],
      ["a Date", { at: new Date(0) }, "completed"],
      ["a BigInt", { big: 10n ** 30n }, "completed"],
      ["a Map and a Set", { m: new Map([[1, new Set(["x"])]]) }, "completed"],
      [
        "circular",
        (() => {
          const o: Record<string, unknown> = { a: 1 };
          o.self = o;
          return o;
        })(),
        "error",
      ],
      ["a function", { run: () => 1 }, "error"],
      ["a symbol", { s: Symbol("x") }, "error"],
      ["10,000 levels deep", deep(10_000), "error"],
    ] as [string, unknown, string][]
  ) {
    test(
      `structured ${name}: stored or refused as the call's error, never a stuck turn`,
      TIMEOUT,
      async () => {
        await watchdog(WATCHDOG_MS, async () => {
          const { e, view } = await oneCall(() => ({ output: "done", structured }));
          assert.equal(view.status, "idle");
          assert.deepEqual(tools(view).map((t) => t.status), [status]);
          assert.equal(lastTurn(view).outcome, "completed");
          // A restart reads everything back: what was stored is readable.
          const again = await e.threads.history(e.threadId);
          assert.equal(again.items.length, view.items.length);
          await e.host.shutdown();
        });
      },
    );
  }

  test(
    "a zod transform that throws gives an error result; the handler never runs",
    TIMEOUT,
    async () => {
      await watchdog(WATCHDOG_MS, async () => {
        let ran = 0;
        const { e, view } = await oneCall(() => String(++ran), {
          input: z.object({ n: z.number() }).transform(() => {
            throw "transform broke";
          }),
        });
        assert.equal(ran, 0);
        assert.deepEqual(tools(view).map((t) => t.status), ["error"]);
        const toolMessage = e.gateway.requests[1].messages.find((m) => m.role === "tool");
        assert.match((toolMessage as { output: string }).output, /transform broke/);
        assert.equal(lastTurn(view).outcome, "completed");
        await e.host.shutdown();
      });
    },
  );

  test(
    "a zod refinement that throws, and an async refinement, give error results",
    TIMEOUT,
    async () => {
      await watchdog(WATCHDOG_MS, async () => {
        for (
          const input of [
            z.object({ n: z.number() }).refine(() => {
              throw new TypeError("refine broke");
            }),
            z.object({ n: z.number() }).refine(() => Promise.resolve(true)),
          ]
        ) {
          const { e, view } = await oneCall(() => "ran", { input });
          assert.deepEqual(tools(view).map((t) => t.status), ["error"]);
          assert.equal(lastTurn(view).outcome, "completed");
          await e.host.shutdown();
        }
      });
    },
  );

  test(
    "a permission function that throws, or answers nonsense, never lets the call run",
    TIMEOUT,
    async () => {
      await watchdog(WATCHDOG_MS, async () => {
        for (
          const permission of [
            () => {
              throw null;
            },
            () => "maybe",
          ]
        ) {
          let ran = 0;
          const { e, view } = await oneCall(() => String(++ran), { permission });
          assert.equal(ran, 0);
          assert.deepEqual(tools(view).map((t) => t.status), ["error"]);
          assert.equal(lastTurn(view).outcome, "completed");
          await e.host.shutdown();
        }
      });
    },
  );

  test(
    "10,000-deep JSON arguments are an invalid call, never a stack overflow",
    TIMEOUT,
    async () => {
      await watchdog(WATCHDOG_MS, async () => {
        let ran = 0;
        const { e, view } = await oneCall(() => String(++ran), {
          arguments: "[".repeat(10_000) + "]".repeat(10_000),
          // Any object passes the schema, so only the parse of the argument text can refuse it.
          input: z.looseObject({}),
        });
        assert.equal(ran, 0);
        assert.equal(view.status, "idle");
        assert.equal(lastTurn(view).outcome, "completed");
        const toolMessage = e.gateway.requests[1].messages.find((m) => m.role === "tool");
        assert.match((toolMessage as { output: string }).output, /nest deeper/);
        await e.host.shutdown();
      });
    },
  );

  test(
    "a gateway's finish.state that cannot be stored fails the turn with engine_contract",
    TIMEOUT,
    async () => {
      await watchdog(WATCHDOG_MS, async () => {
        const circular: Record<string, unknown> = {};
        circular.self = circular;
        for (const state of [circular, { n: 1n }]) {
          const gateway = misbehavingGateway([{
            kind: "events",
            events: [{ type: "text", delta: "hi" }, { type: "finish", reason: "stop", state }],
          }]);
          const host = await openHost({ store: memoryStore() });
          const threads = host.threads({
            agent: defineAgent({ id: "a", systemPrompt: "s", gateway }),
          });
          const { threadId } = await threads.create({ requestKey: "c" });
          await threads.send({ threadId, requestKey: "s", input: { text: "go" } });
          const view = await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
          assert.deepEqual(lastTurn(view), { outcome: "failed", code: "engine_contract" });
          assert.match(view.turns.at(-1)!.failure!.message, /finish\.state/);
          assert.equal(view.items.filter((i) => i.kind === "assistant").length, 0);
          await host.shutdown();
        }
      });
    },
  );

  test(
    "gateway events with wrong-typed fields fail the turn with engine_contract, and the thread still loads",
    TIMEOUT,
    async () => {
      await watchdog(WATCHDOG_MS, async () => {
        const broken = [
          { type: "text", delta: 5 },
          { type: "usage", usage: { inputTokens: "many" } },
          { type: "finish", reason: 7 },
          { type: "tool-call-start", callId: 1, name: "x" },
        ] as unknown as ProviderEvent[];
        for (const event of broken) {
          const gateway = misbehavingGateway([{
            kind: "events",
            events: [event, { type: "finish", reason: "stop" }],
          }]);
          const store = faultyStore(); // its close() keeps the data for the second host
          const host = await openHost({ store });
          const agent = defineAgent({ id: "a", systemPrompt: "s", gateway });
          const threads = host.threads({ agent });
          const { threadId } = await threads.create({ requestKey: "c" });
          await threads.send({ threadId, requestKey: "s", input: { text: "go" } });
          const view = await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
          assert.deepEqual(lastTurn(view), { outcome: "failed", code: "engine_contract" });
          await host.shutdown();
          // Nothing malformed reached the journal: a new host reads the thread.
          const again = await openHost({ store });
          const reread = await again.threads({ agent }).view(threadId);
          assert.deepEqual(reread.turns.map((t) => t.outcome), ["failed"]);
          await again.shutdown();
        }
      });
    },
  );

  test(
    "two tool calls with the same id in one step: engine_contract, nothing runs",
    TIMEOUT,
    async () => {
      await watchdog(WATCHDOG_MS, async () => {
        let ran = 0;
        const probe = defineTool({
          name: "probe",
          description: "Counts",
          input: z.object({}),
          execute: () => String(++ran),
        });
        const gateway = misbehavingGateway([
          {
            kind: "events",
            events: [
              ...callEvents("same", "probe", "{}"),
              ...callEvents("same", "probe", "{}"),
              { type: "finish", reason: "tool_calls" },
            ],
          },
          { kind: "events", events: answerEvents("never") },
        ]);
        const host = await openHost({ store: memoryStore() });
        const threads = host.threads({
          agent: defineAgent({ id: "a", systemPrompt: "s", gateway, tools: [probe] }),
        });
        const { threadId } = await threads.create({ requestKey: "c" });
        await threads.send({ threadId, requestKey: "s", input: { text: "go" } });
        const view = await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
        assert.equal(ran, 0);
        assert.deepEqual(lastTurn(view), { outcome: "failed", code: "engine_contract" });
        assert.match(view.turns.at(-1)!.failure!.message, /same id/);
        const ids = view.items.map((item) => item.id);
        assert.equal(new Set(ids).size, ids.length, "view item ids are unique");
        await host.shutdown();
      });
    },
  );
});

function deep(levels: number): unknown {
  let value: unknown = 0;
  for (let i = 0; i < levels; i++) value = { v: value };
  return value;
}
