// Titles over a thread's life (issue 15): the fallback title comes with the
// first accepted message, a `provider` agent asks its gateway for a title in
// the background, a host title always wins, and a pending title falls back
// after a restart.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import {
  defineAgent,
  type KvStore,
  memoryStore,
  type ObservationEvent,
  openHost,
  type ThreadView,
} from "@floret/engine";
import { type ScriptStep } from "@floret/engine/testing";
import { deferred, engine, FAST_RETRY } from "./support/engine.ts";
import { isTitleRequest, type TitleAnswer, titleGateway } from "./support/title_gateway.ts";

async function providerHost(
  steps: ScriptStep[],
  answer: TitleAnswer,
  store: KvStore = memoryStore(),
) {
  const gateway = titleGateway(steps, answer);
  const events: ObservationEvent[] = [];
  const host = await openHost({ store, onEvent: (event) => events.push(event) });
  const threads = host.threads({
    agent: defineAgent({
      id: "titled",
      systemPrompt: "You are a test agent.",
      gateway,
      providerRetry: FAST_RETRY,
      titles: "provider",
    }),
  });
  const { threadId } = await threads.create({ requestKey: "create" });
  return { host, threads, gateway, events, store, threadId };
}

async function waitForTitle(
  read: () => Promise<ThreadView>,
  done: (view: ThreadView) => boolean,
): Promise<ThreadView> {
  const deadline = Date.now() + 5_000;
  for (;;) {
    const view = await read();
    if (done(view)) return view;
    if (Date.now() > deadline) throw new Error(`Title never settled: ${JSON.stringify(view)}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe("fallback titles", () => {
  test("the first accepted message installs its first line as the title, in the same commit", async () => {
    const e = await engine([{ text: "one" }, { text: "two" }]);
    const before = await e.threads.view(e.threadId);
    assert.equal(before.title, undefined);
    assert.equal(before.titleStatus, "none");
    assert.equal(before.titleGeneration, 0);
    const sent = await e.threads.send({
      threadId: e.threadId,
      requestKey: "s1",
      input: { text: "\n   Plan   the trip\tto Lisbon  \nand book a hotel" },
    });
    // The accepted view already carries it: no later commit installs it.
    assert.equal(sent.view.title, "Plan the trip to Lisbon");
    assert.equal(sent.view.titleStatus, "fallback");
    assert.equal(sent.view.titleGeneration, 0);
    await e.threads.waitForIdle(e.threadId, { timeoutMs: 5_000 });
    await e.threads.send({ threadId: e.threadId, requestKey: "s2", input: { text: "Other" } });
    const view = await e.threads.waitForIdle(e.threadId, { timeoutMs: 5_000 });
    assert.equal(view.title, "Plan the trip to Lisbon", "only the first message makes the title");
    const listed = (await e.threads.list()).threads.find((t) => t.threadId === e.threadId);
    assert.equal(listed?.title, "Plan the trip to Lisbon");
    assert.equal(listed?.titleStatus, "fallback");
    assert.equal(listed?.titleGeneration, 0);
    // A "host" agent never asks its gateway for a title.
    assert.equal(e.gateway.requests.length, 2);
    await e.host.shutdown();
  });

  test("the fallback is at most 200 characters and never splits a character", async () => {
    const e = await engine([{ text: "ok" }]);
    const long = "🙂".repeat(150) + "x".repeat(100);
    const sent = await e.threads.send({
      threadId: e.threadId,
      requestKey: "s",
      input: { text: long },
    });
    assert.equal(Array.from(sent.view.title ?? "").length, 200);
    assert.equal(sent.view.title, "🙂".repeat(150) + "x".repeat(50));
    await e.threads.waitForIdle(e.threadId, { timeoutMs: 5_000 });
    await e.host.shutdown();
  });

  test("a host title (at create or by setTitle) is ready, bumps the generation and is never replaced", async () => {
    const e = await engine([{ text: "ok" }]);
    const created = await e.threads.create({ requestKey: "c2", title: "Named" });
    assert.equal(created.view.titleStatus, "ready");
    assert.equal(created.view.titleGeneration, 1);
    await e.threads.send({ threadId: created.threadId, requestKey: "s", input: { text: "Hi" } });
    let view = await e.threads.waitForIdle(created.threadId, { timeoutMs: 5_000 });
    assert.equal(view.title, "Named");
    const set = await e.threads.setTitle({
      threadId: created.threadId,
      requestKey: "t",
      title: "Renamed",
    });
    assert.deepEqual([set.view.title, set.view.titleStatus, set.view.titleGeneration], [
      "Renamed",
      "ready",
      2,
    ]);
    view = await e.threads.view(created.threadId);
    assert.equal(view.titleGeneration, 2);
    await e.host.shutdown();
  });
});

describe("provider titles", () => {
  test("one background request installs a generated title; it never enters the conversation", async () => {
    const e = await providerHost([{ text: "Sure, let us plan it." }], {
      text: '"Lisbon trip planning."\nextra',
    });
    const updates = e.threads.subscribe(e.threadId)[Symbol.asyncIterator]();
    const sent = await e.threads.send({
      threadId: e.threadId,
      requestKey: "s",
      input: { text: "Plan a trip to Lisbon" },
    });
    assert.equal(sent.view.title, "Plan a trip to Lisbon");
    assert.equal(sent.view.titleStatus, "pending");
    assert.equal(sent.view.titleGeneration, 1);
    const view = await waitForTitle(
      () => e.threads.view(e.threadId),
      (v) => v.titleStatus === "ready",
    );
    assert.equal(view.title, "Lisbon trip planning");
    assert.equal(view.titleGeneration, 1);
    // Subscribers see each title state as a component, in order.
    const states: unknown[] = [];
    while (!states.some((state) => (state as { titleStatus: string }).titleStatus === "ready")) {
      const next = await updates.next();
      if (next.done) break;
      if (next.value.type !== "batch") continue;
      for (const op of next.value.ops) {
        if (op.op === "component" && op.name === "titleState") states.push(op.value);
      }
    }
    await updates.return?.();
    assert.deepEqual(states, [
      { title: "Plan a trip to Lisbon", titleStatus: "pending", titleGeneration: 1 },
      { title: "Lisbon trip planning", titleStatus: "ready", titleGeneration: 1 },
    ]);
    const idle = await e.threads.waitForIdle(e.threadId, { timeoutMs: 5_000 });
    assert.deepEqual(idle.items.map((item) => item.kind), ["user", "assistant"]);
    assert.equal(e.gateway.titleRequests.length, 1);
    const [request] = e.gateway.titleRequests;
    assert.deepEqual(request.tools, []);
    assert.equal((request.messages[1] as { text: string }).text, "Plan a trip to Lisbon");
    // The turn's requests never saw the title request or its answer.
    for (const turnRequest of e.gateway.turns.requests) {
      assert.ok(!isTitleRequest(turnRequest));
      assert.ok(!JSON.stringify(turnRequest.messages).includes("Lisbon trip planning"));
    }
    // A second message asks for no second title.
    await e.threads.send({ threadId: e.threadId, requestKey: "s2", input: { text: "more" } });
    await e.threads.waitForIdle(e.threadId, { timeoutMs: 5_000 });
    assert.equal(e.gateway.titleRequests.length, 1);
    assert.ok(e.events.some((event) => event.type === "title.ready"));
    const listed = (await e.threads.list()).threads.find((t) => t.threadId === e.threadId);
    assert.equal(listed?.titleStatus, "ready");
    await e.host.shutdown();
  });

  test("a hanging title request never blocks the turn", async () => {
    const e = await providerHost([{ text: "Answer." }], { hang: true });
    await e.threads.send({ threadId: e.threadId, requestKey: "s", input: { text: "Question" } });
    const view = await e.threads.waitForIdle(e.threadId, { timeoutMs: 5_000 });
    assert.equal(view.turns[0].outcome, "completed");
    assert.equal(view.titleStatus, "pending");
    assert.equal(view.title, "Question", "the fallback shows while the title is pending");
    await e.host.shutdown();
  });

  test("a host title always wins: a late generated title is dropped by generation", async () => {
    const release = deferred();
    const e = await providerHost([{ text: "Answer." }], {
      text: "Generated",
      release: release.promise,
    });
    await e.threads.send({ threadId: e.threadId, requestKey: "s", input: { text: "Question" } });
    await e.gateway.titleStarted;
    const set = await e.threads.setTitle({ threadId: e.threadId, requestKey: "t", title: "Mine" });
    assert.deepEqual([set.view.titleStatus, set.view.titleGeneration], ["ready", 2]);
    release.resolve();
    await waitForTitle(
      async () => {
        const dropped = e.events.some((event) => event.type === "title.dropped");
        return { ...(await e.threads.view(e.threadId)), dropped } as unknown as ThreadView;
      },
      (v) => (v as unknown as { dropped: boolean }).dropped,
    );
    const view = await e.threads.view(e.threadId);
    assert.deepEqual([view.title, view.titleStatus, view.titleGeneration], ["Mine", "ready", 2]);
    await e.host.shutdown();
  });

  test("a failed title request leaves the fallback title, status failed", async () => {
    const e = await providerHost([{ text: "Answer." }], { error: "model unavailable" });
    await e.threads.send({ threadId: e.threadId, requestKey: "s", input: { text: "Question" } });
    const view = await waitForTitle(
      () => e.threads.view(e.threadId),
      (v) => v.titleStatus === "failed",
    );
    assert.equal(view.title, "Question");
    assert.equal(view.titleGeneration, 1);
    await e.host.shutdown();
  });

  test("restart in the middle of a title request: the title falls back and survives", async () => {
    const store = memoryStore();
    const closed = { ...store, close: async () => {} }; // the store outlives the first host
    const first = await providerHost([{ text: "Answer." }], { hang: true }, closed);
    await first.threads.send({
      threadId: first.threadId,
      requestKey: "s",
      input: { text: "Question\nbody" },
    });
    await first.gateway.titleStarted;
    await first.threads.waitForIdle(first.threadId, { timeoutMs: 5_000 });
    await first.host.shutdown(); // aborts the title request; its claim stays pending, as after a crash
    const second = await openHost({ store });
    const threads = second.threads({
      agent: defineAgent({
        id: "titled",
        systemPrompt: "x",
        gateway: titleGateway([], { text: "Never asked" }),
        titles: "provider",
      }),
    });
    const view = await threads.view(first.threadId);
    assert.deepEqual([view.title, view.titleStatus, view.titleGeneration], [
      "Question",
      "fallback",
      1,
    ]);
    const listed = (await threads.list()).threads.find((t) => t.threadId === first.threadId);
    assert.equal(listed?.titleStatus, "fallback");
    // A host title still works and wins.
    const set = await threads.setTitle({
      threadId: first.threadId,
      requestKey: "t",
      title: "Mine",
    });
    assert.deepEqual([set.view.titleStatus, set.view.titleGeneration], ["ready", 2]);
    // A fork takes the title but no claim.
    const fork = await threads.fork({ threadId: first.threadId, requestKey: "f" });
    assert.deepEqual([fork.view.title, fork.view.titleStatus], ["Mine", "ready"]);
    await second.shutdown();
  });
});
