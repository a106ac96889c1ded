/**
 * A stream that ignores its abort and keeps yielding text after an immediate
 * cancel settled its turn: the late deltas reach neither the view nor a
 * subscriber (DESIGN §10: the abandoned stream's later events are ignored).
 * The narrower window, a delta between the cancel's commit landing and the
 * run being let go, is pinned by tests/view_live_settled.test.ts.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { defineAgent, memoryStore, openHost, type ThreadUpdate } from "@floret/engine";
import { misbehavingGateway } from "./support/robust.ts";

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

test("deltas a cancelled stream yields later change nothing shown or published", async () => {
  const gateway = misbehavingGateway([{
    kind: "late",
    // Long enough that the cancel lands while the second event is still on its way.
    delayMs: 300,
    events: [
      { type: "text", delta: "abc" },
      { type: "text", delta: " late" },
      { type: "text", delta: " later" },
      { type: "finish", reason: "stop" },
    ],
  }]);
  const host = await openHost({ store: memoryStore() });
  const threads = host.threads({
    agent: defineAgent({
      id: "late",
      systemPrompt: "s",
      gateway,
      providerRetry: { disabled: true },
    }),
  });
  const { threadId } = await threads.create({ requestKey: "c" });
  const updates = threads.subscribe(threadId)[Symbol.asyncIterator]();
  const seen: ThreadUpdate[] = [];
  const reading = (async () => {
    for (;;) {
      const next = await updates.next();
      if (next.done) return;
      seen.push(next.value);
    }
  })();
  try {
    await threads.send({ threadId, requestKey: "s", input: { text: "go" } });
    let shown = "";
    for (let i = 0; i < 2000 && shown !== "abc"; i++) {
      await pause(5);
      const item = (await threads.view(threadId)).items.find((it) => it.kind === "assistant");
      shown = item?.text ?? "";
    }
    assert.equal(shown, "abc", "the first delta is shown live");
    // The engine asks for the next event before the cancel, so one is pending when it lands
    // (showing "abc" comes before that read, and a cancel in between would leave none).
    for (let i = 0; i < 2000 && gateway.reads < 2; i++) await pause(5);
    assert.equal(gateway.reads, 2, "the engine reads on after the first delta");
    assert.equal(gateway.lateYields, 1, "the second event is still on its way");
    const { view } = await threads.cancel({ threadId, requestKey: "x", mode: "immediate" });
    const settled = view.items.filter((item) => item.kind === "assistant");
    assert.deepEqual(settled.map((item) => [item.text, item.live]), [["abc", undefined]]);
    // The stream's next() was pending when the cancel landed: it yields " late" afterwards.
    for (let i = 0; i < 1000 && gateway.lateYields < 2; i++) await pause(10);
    assert.equal(gateway.lateYields, 2, "the pending delta was yielded after the cancel");
    await pause(50); // a turn of the loop for anything it could still publish
    const after = await threads.view(threadId);
    assert.deepEqual(
      after.items.filter((item) => item.kind === "assistant").map((item) => item.text),
      ["abc"],
    );
    assert.equal(after.viewVersion, view.viewVersion, "nothing published after the cancel");
    const late = seen.flatMap((update) => update.type === "batch" ? update.ops : [])
      .filter((op) => (op as { op: string }).op === "append-text")
      .map((op) => (op as { text: string }).text);
    assert.deepEqual(late.filter((text) => text.includes("late")), []);
  } finally {
    await updates.return?.();
    await reading;
    await host.shutdown();
  }
});
