/**
 * The views that commands return are the caller's own and show the thread as
 * it was when the command returned, however late they are read; and they look
 * like plain objects to JSON, structuredClone, spreads and deep equality.
 * Short lists are copied at once, long ones on first read
 * (src/runtime/actor/view_snapshot.ts): every test runs on a short thread and on a
 * thread long enough for both of its lists to be copied on first read.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import {
  defineAgent,
  type Gateway,
  memoryStore,
  openHost,
  type ProviderEvent,
  type ThreadView,
} from "@floret/engine";
import { type ScriptStep } from "@floret/engine/testing";
import { COPY_AT_ONCE_BELOW } from "../src/runtime/actor/view_snapshot.ts";
import { deferred, engine, sendAndWait, type TestEngine } from "./support/engine.ts";

/** The view as a plain, fully copied object (what an eager copy would have been). */
const plain = (view: ThreadView): ThreadView => JSON.parse(JSON.stringify(view));

/** Turns sent before a test's own: none, or enough for items and turns to be long lists. */
const SHAPES = [
  { name: "short thread", turns: 0 },
  { name: "long thread", turns: COPY_AT_ONCE_BELOW },
];

/** Answers for `turns` earlier one-message turns, then `steps`. */
const script = (turns: number, steps: ScriptStep[]): ScriptStep[] => [
  ...Array.from({ length: turns }, (_, n) => ({ text: `earlier answer ${n}` })),
  ...steps,
];

/** Plays the earlier turns; returns how many items they made. */
async function earlier(e: TestEngine, turns: number): Promise<number> {
  for (let n = 0; n < turns; n++) await sendAndWait(e, `earlier ${n}`);
  return turns * 2;
}

for (const shape of SHAPES) {
  describe(`views returned by commands, ${shape.name}`, () => {
    test("a send's view still shows the accepted turn after the turn has ended", async () => {
      const e = await engine(script(shape.turns, [{ text: "Hello there" }]));
      const before = await earlier(e, shape.turns);
      const sent = await e.threads.send({
        threadId: e.threadId,
        requestKey: "s1",
        input: { text: "hi" },
      });
      const idle = await e.threads.waitForIdle(e.threadId, { timeoutMs: 5_000 });
      assert.equal(sent.view.status, "running");
      assert.deepEqual(sent.view.items.slice(before).map((item) => item.kind), ["user"]);
      assert.equal(sent.view.items.length, before + 1);
      assert.equal(sent.view.turns.length, shape.turns + 1);
      assert.equal(sent.view.turns.at(-1)?.outcome, undefined);
      assert.deepEqual(idle.items.slice(before).map((item) => item.kind), ["user", "assistant"]);
      assert.equal(idle.turns.at(-1)?.outcome, "completed");
      await e.host.shutdown();
    });

    test("edits of a view's items, tool calls, turns and history pages stay the host's", async () => {
      const e = await engine(
        script(shape.turns, [
          { toolCalls: [{ name: "add", arguments: { a: 1, b: 2 } }] },
          { text: "3" },
          { text: "two" },
        ]),
      );
      const before = await earlier(e, shape.turns);
      const view = await sendAndWait(e, "add");
      const other = await e.threads.view(e.threadId);
      const tool = view.items.find((item) => item.kind === "tool")!;
      assert.equal(tool.tool?.status, "completed");
      tool.tool!.status = "error";
      view.items[before].text = "edited";
      view.items.push({ ...view.items[before + 1], id: "made-up" });
      view.turns.at(-1)!.finalItemIds.push("made-up");
      view.turns.length = 0;
      view.todos.push({ id: "t", text: "x", status: "pending" } as ThreadView["todos"][number]);
      const page = await e.threads.history(e.threadId, { limit: 10 });
      page.items.find((item) => item.kind === "tool")!.tool!.output = "edited";
      const again = await e.threads.view(e.threadId);
      const kept = again.items.find((item) => item.kind === "tool")!.tool!;
      assert.equal(kept.status, "completed");
      assert.equal(kept.output, "3");
      assert.equal(again.items.length, before + 3);
      assert.equal(again.items[before].text, "add");
      assert.equal(again.turns.length, shape.turns + 1);
      assert.ok(!again.turns.at(-1)!.finalItemIds.includes("made-up"));
      assert.equal(again.todos.length, 0);
      assert.equal(other.items[before].text, "add");
      const next = await sendAndWait(e, "second");
      assert.deepEqual(next.items.slice(before + 3).map((item) => item.text), ["second", "two"]);
      await e.host.shutdown();
    });

    test("looks like a plain object to JSON, structuredClone, spreads and deep equality", async () => {
      const e = await engine(script(shape.turns, [{ text: "Hello" }]));
      await earlier(e, shape.turns);
      await sendAndWait(e, "hi");
      const a = await e.threads.view(e.threadId);
      const b = await e.threads.view(e.threadId);
      const c = await e.threads.view(e.threadId);
      const d = await e.threads.view(e.threadId);
      const keys = Object.keys(a);
      assert.deepEqual(keys.slice(keys.indexOf("status"), keys.indexOf("viewVersion") + 1), [
        "status",
        "items",
        "pending",
        "queue",
        "turns",
        "todos",
        "viewVersion",
      ]);
      assert.deepEqual(structuredClone(a), plain(b));
      assert.deepEqual({ ...c }, plain(b));
      assert.deepEqual(c, a);
      assert.equal(JSON.stringify(d), JSON.stringify(b));
      await e.host.shutdown();
    });

    test("items can be replaced before they are read, and read from a frozen view", async () => {
      const e = await engine(script(shape.turns, [{ text: "Hello" }]));
      const before = await earlier(e, shape.turns);
      await sendAndWait(e, "hi");
      const replaced = await e.threads.view(e.threadId);
      replaced.items = [];
      assert.deepEqual(replaced.items, []);
      const frozen = Object.freeze(await e.threads.view(e.threadId));
      assert.equal(frozen.items.length, before + 2);
      assert.equal(frozen.items, frozen.items, "a frozen view serves one copy");
      await e.host.shutdown();
    });

    test("a view taken while text streams keeps the text it saw", async () => {
      const gate = deferred();
      let calls = 0;
      const gateway: Gateway = {
        info: {
          provider: "test",
          model: "gated",
          stateKey: "test:gated",
          capabilities: { reasoning: "unsupported", images: false, contextWindowTokens: 100_000 },
        },
        async *stream(): AsyncGenerator<ProviderEvent> {
          // The earlier turns answer at once; the last one streams in two parts.
          if (++calls <= shape.turns) {
            yield { type: "text", delta: `earlier answer ${calls}` };
          } else {
            yield { type: "text", delta: "Hel" };
            await gate.promise;
            yield { type: "text", delta: "lo" };
          }
          yield { type: "finish", reason: "stop" };
        },
      };
      const host = await openHost({ store: memoryStore() });
      const threads = host.threads({
        agent: defineAgent({ id: "gated", systemPrompt: "Test.", gateway }),
      });
      const { threadId } = await threads.create({ requestKey: "c" });
      for (let n = 0; n < shape.turns; n++) {
        await threads.send({ threadId, requestKey: `e${n}`, input: { text: `earlier ${n}` } });
        await threads.waitForIdle(threadId, { timeoutMs: 5_000 });
      }
      await threads.send({ threadId, requestKey: "s", input: { text: "hi" } });
      let during: ThreadView | undefined;
      for (let tries = 0; tries < 500 && !during; tries++) {
        const view = await threads.view(threadId);
        // Taken again and left unread: a long one's items are copied only after the stream moved on.
        if (view.items.at(-1)?.kind === "assistant") during = await threads.view(threadId);
        else await new Promise((resolve) => setTimeout(resolve, 2));
      }
      assert.ok(during, "the streamed text showed in a view");
      gate.resolve();
      const idle = await threads.waitForIdle(threadId, { timeoutMs: 5_000 });
      assert.equal(during.items.at(-1)?.text, "Hel");
      assert.equal(idle.items.at(-1)?.text, "Hello");
      await host.shutdown();
    });
  });
}

describe("views returned by commands, growing thread", () => {
  test("a view taken among hundreds of items keeps them while the thread grows", async () => {
    const turns = 160; // 320 items: more than two of the list's chunks
    const e = await engine(Array.from({ length: turns * 2 }, (_, n) => ({ text: `answer ${n}` })));
    for (let n = 0; n < turns; n++) await sendAndWait(e, `question ${n}`);
    const before = await e.threads.view(e.threadId);
    const frozen = structuredClone(await e.threads.view(e.threadId));
    for (let n = turns; n < turns * 2; n++) await sendAndWait(e, `question ${n}`);
    assert.equal(before.items.length, turns * 2);
    assert.deepEqual(plain(before), plain(frozen));
    const after = await e.threads.view(e.threadId);
    assert.equal(after.items.length, turns * 4);
    assert.deepEqual(after.items.slice(0, turns * 2), frozen.items);
    await e.host.shutdown();
  });
});
