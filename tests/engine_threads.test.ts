import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { FloretError, memoryStore } from "@floret/engine";
import { engine, lastTurn, sendAndWait, until } from "./support/engine.ts";

const isCode = (code: string) => (error: unknown) =>
  error instanceof FloretError && error.code === code;

describe("fork", () => {
  test("a fork reads the source up to the chosen item; a completed turn stays completed", async () => {
    const e = await engine([
      { toolCalls: [{ name: "add", arguments: { a: 1, b: 2 } }] },
      { text: "three" },
      { text: "second answer" },
      { text: "fork answer" },
    ]);
    await sendAndWait(e, "first");
    const source = await sendAndWait(e, "second");
    const firstAnswer = source.items.find((i) => i.text === "three")!;
    const forked = await e.threads.fork({
      threadId: e.threadId,
      requestKey: "f1",
      atItemId: firstAnswer.id,
    });
    assert.notEqual(forked.threadId, e.threadId);
    assert.deepEqual(forked.view.items.map((i) => i.kind), ["user", "tool", "assistant"]);
    assert.deepEqual(forked.view.items.map((i) => i.id), source.items.slice(0, 3).map((i) => i.id));
    assert.deepEqual(forked.view.turns.map((t) => t.outcome), ["completed"]);
    assert.deepEqual(forked.view.forkedFrom, { threadId: e.threadId, itemId: firstAnswer.id });
    // The fork continues on its own; the source is untouched.
    await e.threads.send({
      threadId: forked.threadId,
      requestKey: "fs",
      input: { text: "in fork" },
    });
    const fork = await e.threads.waitForIdle(forked.threadId, { timeoutMs: 5000 });
    assert.equal(fork.items.at(-1)?.text, "fork answer");
    assert.deepEqual(e.gateway.requests[3].messages.map((m) => m.role), [
      "system",
      "user",
      "assistant",
      "tool",
      "assistant",
      "user",
    ]);
    assert.equal((await e.threads.view(e.threadId)).items.length, source.items.length);
    // Replay returns the same fork.
    const again = await e.threads.fork({
      threadId: e.threadId,
      requestKey: "f1",
      atItemId: firstAnswer.id,
    });
    assert.equal(again.threadId, forked.threadId);
    await e.host.shutdown();
  });

  test("a cut inside a turn reads interrupted in the fork; forks of forks work; deleting the source keeps forks", async () => {
    const e = await engine([
      { toolCalls: [{ name: "add", arguments: { a: 1, b: 2 } }] },
      { text: "three" },
      { text: "from the fork of the fork" },
    ]);
    const view = await sendAndWait(e, "first");
    const toolItem = view.items.find((i) => i.kind === "tool")!;
    const cut = await e.threads.fork({
      threadId: e.threadId,
      requestKey: "f1",
      atItemId: toolItem.id,
    });
    assert.deepEqual(lastTurn(cut.view), { outcome: "interrupted", code: "interrupted" });
    assert.equal(cut.view.items.length, 2);
    const whole = await e.threads.fork({ threadId: e.threadId, requestKey: "f2" });
    const nested = await e.threads.fork({ threadId: whole.threadId, requestKey: "f3" });
    await e.threads.delete({ threadId: e.threadId, requestKey: "d" });
    await e.threads.delete({ threadId: whole.threadId, requestKey: "d" });
    const reread = await e.threads.view(nested.threadId);
    assert.deepEqual(reread.items.map((i) => i.text ?? i.tool?.output), ["first", "3", "three"]);
    await e.threads.send({ threadId: nested.threadId, requestKey: "s", input: { text: "more" } });
    const after = await e.threads.waitForIdle(nested.threadId, { timeoutMs: 5000 });
    assert.equal(after.items.at(-1)?.text, "from the fork of the fork");
    await assert.rejects(
      e.threads.fork({ threadId: nested.threadId, requestKey: "f4", atItemId: "nope" }),
      isCode("invalid_input"),
    );
    // Deleting the last reader collects the whole chain of deleted sources.
    const entriesOf = async (id: string) => (await e.store.list({ prefix: ["entry", id] })).length;
    assert.ok(await entriesOf(e.threadId) > 0, "kept while a fork reads them");
    await e.threads.delete({ threadId: cut.threadId, requestKey: "d" });
    await e.threads.delete({ threadId: nested.threadId, requestKey: "d" });
    for (const id of [e.threadId, whole.threadId, nested.threadId, cut.threadId]) {
      assert.equal(await entriesOf(id), 0, `entries of ${id} are purged`);
    }
    await e.host.shutdown();
  });

  test("a fork of a running thread cuts at the chosen item and inherits no queue", async () => {
    const e = await engine([{ text: "a" }, { hang: true }]);
    await sendAndWait(e, "one");
    await e.threads.send({ threadId: e.threadId, requestKey: "two", input: { text: "two" } });
    await e.threads.send({ threadId: e.threadId, requestKey: "three", input: { text: "three" } });
    const forked = await e.threads.fork({ threadId: e.threadId, requestKey: "f" });
    assert.equal(forked.view.status, "idle");
    assert.deepEqual(forked.view.queue, []);
    assert.deepEqual(forked.view.turns.map((t) => t.outcome), ["completed", "interrupted"]);
    await e.threads.cancel({ threadId: e.threadId, requestKey: "c" });
    await e.host.shutdown();
  });
});

describe("delete, title, list and history", () => {
  test("a deleted thread is thread_not_found; replaying the delete succeeds; a running turn is stopped", async () => {
    const e = await engine([{ hang: true }]);
    await e.threads.send({ threadId: e.threadId, requestKey: "s", input: { text: "go" } });
    await e.threads.delete({ threadId: e.threadId, requestKey: "del" });
    await e.threads.delete({ threadId: e.threadId, requestKey: "del" });
    await assert.rejects(e.threads.view(e.threadId), isCode("thread_not_found"));
    await assert.rejects(
      e.threads.delete({ threadId: e.threadId, requestKey: "del2" }),
      isCode("thread_not_found"),
    );
    assert.deepEqual((await e.threads.list()).threads, []);
    await e.host.shutdown();
  });

  test("setTitle, list ordered by most recent update with an opaque cursor", async () => {
    const e = await engine([{ text: "a" }]);
    const ids = [e.threadId];
    for (let i = 1; i < 5; i++) {
      await new Promise((resolve) => setTimeout(resolve, 2));
      ids.push((await e.threads.create({ requestKey: `c${i}`, title: `t${i}` })).threadId);
    }
    await new Promise((resolve) => setTimeout(resolve, 2));
    const titled = await e.threads.setTitle({
      threadId: ids[0],
      requestKey: "title",
      title: "Renamed",
    });
    assert.equal(titled.view.title, "Renamed");
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await e.threads.list({ limit: 2, cursor });
      seen.push(...page.threads.map((t) => t.threadId));
      cursor = page.cursor;
    } while (cursor);
    assert.deepEqual(seen, [ids[0], ids[4], ids[3], ids[2], ids[1]]);
    await assert.rejects(e.threads.list({ cursor: "garbage" }), isCode("invalid_input"));
    await assert.rejects(e.threads.list({ limit: 0 }), isCode("invalid_input"));
    await e.host.shutdown();
  });

  test("history pages newest-last with a before cursor", async () => {
    const e = await engine(Array.from({ length: 4 }, (_, i) => ({ text: `answer ${i}` })));
    for (let i = 0; i < 4; i++) await sendAndWait(e, `question ${i}`);
    const texts: string[][] = [];
    let before: string | undefined;
    for (;;) {
      const page = await e.threads.history(e.threadId, { limit: 3, before });
      texts.push(page.items.map((i) => i.text!));
      if (!page.hasMore) break;
      before = page.before;
    }
    assert.deepEqual(texts, [
      ["answer 2", "question 3", "answer 3"],
      ["question 1", "answer 1", "question 2"],
      ["question 0", "answer 0"],
    ]);
    await e.host.shutdown();
  });
});

describe("host", () => {
  test("threads() returns one service per host; other options are invalid_input; shutdown closes everything", async () => {
    const store = memoryStore();
    const e = await engine([{ hang: true }], { store });
    assert.throws(
      () => e.host.threads({ agentFactory: () => Promise.reject(new Error("x")) }),
      isCode("invalid_input"),
    );
    await e.threads.send({ threadId: e.threadId, requestKey: "s", input: { text: "go" } });
    await until(e, (view) => view.status === "running");
    await e.host.shutdown();
    await assert.rejects(e.threads.view(e.threadId), isCode("host_closed"));
    await assert.rejects(e.threads.create({ requestKey: "x" }), isCode("host_closed"));
    await e.host.shutdown();
  });

  test("a store written by a newer engine fails with store_too_new", async () => {
    const { openHost } = await import("@floret/engine");
    const store = memoryStore();
    await openHost({ store });
    const [marker] = await store.list({ prefix: ["meta"] });
    const newer = new TextEncoder().encode(JSON.stringify({ version: 99 }));
    await store.commit({ set: [{ key: marker.key, value: newer }] });
    await assert.rejects(openHost({ store }), isCode("store_too_new"));
  });

  test("a store failure is storage_failure and changes nothing", async () => {
    const { openHost, defineAgent } = await import("@floret/engine");
    const { scriptedGateway } = await import("@floret/engine/testing");
    const inner = memoryStore();
    let failCommits = false;
    const flaky = {
      getMany: inner.getMany.bind(inner),
      list: inner.list.bind(inner),
      close: inner.close.bind(inner),
      commit: (op: Parameters<typeof inner.commit>[0]) =>
        failCommits ? Promise.reject(new Error("disk on fire")) : inner.commit(op),
    };
    const host = await openHost({ store: flaky });
    const threads = host.threads({
      agent: defineAgent({
        id: "a",
        systemPrompt: "s",
        gateway: scriptedGateway([{ text: "ok" }]),
      }),
    });
    const { threadId } = await threads.create({ requestKey: "c" });
    failCommits = true;
    await assert.rejects(
      threads.send({ threadId, requestKey: "s", input: { text: "hi" } }),
      (error: unknown) =>
        isCode("storage_failure")(error) && (error as Error).cause instanceof Error,
    );
    failCommits = false;
    const view = await threads.view(threadId);
    assert.equal(view.items.length, 0);
    assert.equal(view.status, "idle");
    const sent = await threads.send({ threadId, requestKey: "s", input: { text: "hi" } });
    assert.equal(sent.queued, false);
    await threads.waitForIdle(threadId, { timeoutMs: 5000 });
    await host.shutdown();
  });

  test("after a restart, a turn that was running reads interrupted and nothing resumes", async () => {
    const { openHost, defineAgent } = await import("@floret/engine");
    const { scriptedGateway } = await import("@floret/engine/testing");
    const store = memoryStore();
    const keepOpen = { ...store, close: () => Promise.resolve() };
    const e = await engine([{ hang: true }], { store: keepOpen });
    await e.threads.send({ threadId: e.threadId, requestKey: "s", input: { text: "go" } });
    await e.threads.send({ threadId: e.threadId, requestKey: "q", input: { text: "queued" } });
    await until(e, (view) => view.status === "running");
    await e.host.shutdown();
    const gateway = scriptedGateway([{ text: "after restart" }]);
    const host = await openHost({ store });
    const threads = host.threads({ agent: defineAgent({ id: "a", systemPrompt: "s", gateway }) });
    const view = await threads.view(e.threadId);
    assert.equal(view.status, "idle");
    assert.deepEqual(lastTurn(view), { outcome: "interrupted", code: "interrupted" });
    assert.equal(view.queue.length, 1, "queued input stays queued");
    assert.equal(gateway.requests.length, 0);
    await threads.retry({ threadId: e.threadId, requestKey: "r" });
    const done = await threads.waitForIdle(e.threadId, { timeoutMs: 5000 });
    assert.deepEqual(done.turns.map((t) => t.outcome), ["interrupted", "completed", "failed"]);
    assert.deepEqual(
      done.items.map((i) => i.text),
      ["go", "after restart", "queued"],
      "the retry completed, then the queue moved on",
    );
    await host.shutdown();
  });

  test("hosts sharing a store: the owner's run survives another host's writes and runs its queued input", async () => {
    const { openHost, defineAgent } = await import("@floret/engine");
    const { scriptedGateway } = await import("@floret/engine/testing");
    const store = memoryStore();
    const e = await engine([
      { toolCalls: [{ name: "add", arguments: { a: 1, b: 1 } }] },
      { text: "two", delayMs: 80 },
      { text: "queued on the other host, answered here" },
    ], { store });
    await e.threads.send({ threadId: e.threadId, requestKey: "s", input: { text: "1+1" } });
    await until(
      e,
      (view) =>
        view.items.some((item) => item.kind === "tool" && item.tool?.status === "completed"),
    );
    // A second host on the same store: its start-up leaves the live turn alone.
    const other = await openHost({
      store: { ...store, close: () => Promise.resolve() },
      hostId: "web-2",
    });
    const threads = other.threads({
      agent: defineAgent({ id: "b", systemPrompt: "s", gateway: scriptedGateway([]) }),
    });
    await threads.setTitle({ threadId: e.threadId, requestKey: "t", title: "Set elsewhere" });
    const queued = await threads.send({
      threadId: e.threadId,
      requestKey: "q",
      input: { text: "more" },
    });
    assert.equal(queued.queued, true);
    await assert.rejects(
      threads.retry({ threadId: e.threadId, requestKey: "r" }),
      isCode("thread_busy"),
    );
    const seenThere = await threads.waitForIdle(e.threadId, { timeoutMs: 5000 });
    const view = await e.threads.waitForIdle(e.threadId, { timeoutMs: 5000 });
    assert.deepEqual(view.turns.map((t) => t.outcome), ["completed", "completed"]);
    assert.equal(view.title, "Set elsewhere");
    assert.deepEqual(view.items.filter((i) => i.kind === "assistant").map((i) => i.text), [
      "two",
      "queued on the other host, answered here",
    ]);
    assert.deepEqual(seenThere.items.map((i) => i.id), view.items.map((i) => i.id));
    await other.shutdown();
    await e.host.shutdown();
  });

  test("a cancel from another host stops the owner's run", async () => {
    const { openHost, defineAgent } = await import("@floret/engine");
    const { scriptedGateway } = await import("@floret/engine/testing");
    const store = memoryStore();
    const shared = { ...store, close: () => Promise.resolve() };
    const gateway = scriptedGateway([{ hang: true }]);
    // Long enough that a stall of a busy machine cannot let the lease lapse before the
    // cancel (the other host would then settle the turn `interrupted` instead).
    const owner = await openHost({ store: shared, hostId: "web-1", leaseTtlMs: 1000 });
    const agent = defineAgent({ id: "a", systemPrompt: "s", gateway });
    const threads1 = owner.threads({ agent });
    const { threadId } = await threads1.create({ requestKey: "c" });
    await threads1.send({ threadId, requestKey: "s", input: { text: "go" } });
    const other = await openHost({ store: shared, hostId: "web-2" });
    const cancelled = await other.threads({ agent }).cancel({ threadId, requestKey: "stop" });
    assert.deepEqual(lastTurn(cancelled.view), { outcome: "cancelled", code: undefined });
    // The owner notices at its next lease renewal and lets go of the run.
    const seen = await threads1.waitForIdle(threadId, { timeoutMs: 5000 });
    assert.deepEqual(lastTurn(seen), { outcome: "cancelled", code: undefined });
    await other.shutdown();
    await owner.shutdown();
  });

  test("a host whose lease lapsed has its turn settled by another host", async () => {
    const { openHost, defineAgent } = await import("@floret/engine");
    const { scriptedGateway } = await import("@floret/engine/testing");
    const store = memoryStore();
    const shared = { ...store, close: () => Promise.resolve() };
    // A lease long enough that no stall of a busy machine lets it lapse before the
    // early look below (a 40 ms lease once did on a loaded CI run), short enough to wait out.
    const first = await openHost({ store: shared, hostId: "web-1", leaseTtlMs: 1000 });
    const agent = defineAgent({
      id: "a",
      systemPrompt: "s",
      gateway: scriptedGateway([{ hang: true }]),
    });
    const threads1 = first.threads({ agent });
    const { threadId } = await threads1.create({ requestKey: "c" });
    await threads1.send({ threadId, requestKey: "s", input: { text: "go" } });
    const early = await openHost({ store: shared, hostId: "web-2", leaseTtlMs: 40 });
    assert.equal(
      (await early.threads({ agent }).view(threadId)).status,
      "running",
      "a live lease is respected",
    );
    await early.shutdown();
    await first.shutdown(); // stops the run without settling it, like a crash would
    await new Promise((resolve) => setTimeout(resolve, 1050));
    const second = await openHost({ store: shared, hostId: "web-2", leaseTtlMs: 40 });
    const view = await second.threads({ agent }).view(threadId);
    assert.deepEqual(lastTurn(view), { outcome: "interrupted", code: "interrupted" });
    await second.shutdown();
  });

  test("the view a host keeps in memory equals the view rebuilt from the journal", async () => {
    const { openHost, defineAgent } = await import("@floret/engine");
    const { scriptedGateway } = await import("@floret/engine/testing");
    const store = memoryStore();
    const e = await engine([
      { toolCalls: [{ name: "add", arguments: { a: 1, b: 2 } }, { name: "nope", arguments: {} }] },
      { text: "three", reasoning: "adding", usage: { inputTokens: 5, outputTokens: 2 } },
      { error: { status: 400, retry: "never", message: "bad" } },
      { text: "retried" },
      { hang: true, text: "partial" },
    ], { store: { ...store, close: () => Promise.resolve() } });
    await sendAndWait(e, "first");
    await sendAndWait(e, "second");
    await e.threads.retry({ threadId: e.threadId, requestKey: "r" });
    await e.threads.waitForIdle(e.threadId, { timeoutMs: 5000 });
    await e.threads.send({ threadId: e.threadId, requestKey: "third", input: { text: "third" } });
    await until(e, (view) => view.items.some((item) => item.text === "partial"));
    // Let time pass between the live item and its settlement: timestamps must come from the journal.
    await new Promise((resolve) => setTimeout(resolve, 20));
    await e.threads.cancel({ threadId: e.threadId, requestKey: "c" });
    const live = await e.threads.view(e.threadId);
    const other = await openHost({ store, hostId: "reader" });
    const rebuilt = await other.threads({
      agent: defineAgent({ id: "b", systemPrompt: "s", gateway: scriptedGateway([]) }),
    }).view(e.threadId);
    assert.deepEqual(rebuilt.items, live.items);
    assert.deepEqual(rebuilt.turns, live.turns);
    assert.deepEqual(live.turns.map((t) => t.outcome), [
      "completed",
      "failed",
      "completed",
      "cancelled",
    ]);
    await e.host.shutdown();
    await other.shutdown();
  });

  test("waitForIdle times out with code timeout", async () => {
    const e = await engine([{ hang: true }]);
    await e.threads.send({ threadId: e.threadId, requestKey: "s", input: { text: "go" } });
    await assert.rejects(e.threads.waitForIdle(e.threadId, { timeoutMs: 20 }), isCode("timeout"));
    await e.threads.cancel({ threadId: e.threadId, requestKey: "c" });
    await e.host.shutdown();
  });
});
