// Audit (round 11): ending a subscription. DESIGN §8: "Aborting the signal (or
// breaking out of the loop) ends the iteration promptly"; http.md: "Aborting
// a client subscribe ends its loop quietly, as in-process". With batches
// already waiting, the next `next()` after an abort is done — in-process as
// over HTTP — and a pending `next()` ends too. Shutdown still hands over the
// thread's last batches before ending.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { defineAgent, memoryStore, openHost, type ThreadService } from "@floret/engine";
import { scriptedGateway } from "@floret/engine/testing";
import { threadApi, threadClient } from "@floret/engine/http";

const services: { name: string; wrap: (threads: ThreadService) => ThreadService }[] = [
  { name: "in-process", wrap: (threads) => threads },
  {
    name: "over HTTP",
    wrap: (threads) => {
      const app = threadApi(threads, { authorize: () => true });
      return threadClient({ baseUrl: "http://127.0.0.1", fetch: (request) => app.fetch(request) });
    },
  },
];

async function setUp(wrap: (threads: ThreadService) => ThreadService) {
  const host = await openHost({ store: memoryStore() });
  const threads = wrap(host.threads({
    agent: defineAgent({
      id: "abort",
      systemPrompt: "A.",
      gateway: scriptedGateway([{ text: "one answer" }, { text: "two answer" }]),
    }),
  }));
  const { threadId } = await threads.create({ requestKey: "create" });
  return { host, threads, threadId };
}

for (const service of services) {
  describe(`ending a subscription, ${service.name}`, () => {
    test("an abort with batches waiting: the next next() is done", async () => {
      const { host, threads, threadId } = await setUp(service.wrap);
      const controller = new AbortController();
      const updates = threads.subscribe(threadId, { signal: controller.signal })
        [Symbol.asyncIterator]();
      await threads.view(threadId);
      await threads.send({ threadId, requestKey: "s", input: { text: "go" } });
      await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
      const first = await updates.next();
      assert.equal(first.done, false, "a whole turn's batches wait");
      controller.abort();
      const next = await updates.next();
      assert.equal(next.done, true, "nothing is handed out after the abort");
      assert.equal((await updates.next()).done, true);
      await host.shutdown();
    });

    test("an abort while next() waits ends it; a new subscription afterwards works", async () => {
      const { host, threads, threadId } = await setUp(service.wrap);
      const controller = new AbortController();
      const updates = threads.subscribe(threadId, { signal: controller.signal })
        [Symbol.asyncIterator]();
      await threads.view(threadId);
      const pending = updates.next();
      controller.abort();
      assert.equal((await pending).done, true);
      const again = threads.subscribe(threadId)[Symbol.asyncIterator]();
      const view = await threads.view(threadId);
      await threads.send({ threadId, requestKey: "s", input: { text: "go" } });
      let update = await again.next();
      while (
        !update.done && update.value.type === "batch" && update.value.version <= view.viewVersion
      ) {
        update = await again.next();
      }
      assert.equal(update.done, false);
      assert.equal(update.value?.type, "batch");
      await again.return?.();
      await host.shutdown();
    });

    test("options refused as in-process: null, a non-object, a signal that is no AbortSignal", async () => {
      const { host, threads, threadId } = await setUp(service.wrap);
      const refused = (error: unknown) => (error as { code?: string }).code === "invalid_input";
      for (const options of [null, "x", 5, { signal: "x" }, { signal: {} }]) {
        assert.throws(
          () => threads.subscribe(threadId, options as never),
          refused,
          JSON.stringify(options),
        );
      }
      await host.shutdown();
    });

    test("overlapping next() calls are answered in call order, and all end at shutdown", async () => {
      const { host, threads, threadId } = await setUp(service.wrap);
      const updates = threads.subscribe(threadId)[Symbol.asyncIterator]();
      await threads.view(threadId);
      const first = updates.next();
      const second = updates.next();
      await threads.send({ threadId, requestKey: "s", input: { text: "go" } });
      const idle = await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
      const [a, b] = await Promise.all([first, second]);
      assert.equal(a.done, false);
      assert.equal(b.done, false);
      assert.equal(a.value?.type, "batch");
      assert.equal(b.value?.type, "batch");
      if (a.value?.type === "batch" && b.value?.type === "batch") {
        assert.equal(b.value.baseVersion, a.value.version, "the second continues the first");
      }
      // Drain what is left, then leave calls waiting: shutdown ends every one of them.
      let last = b.value?.type === "batch" ? b.value.version : 0;
      while (last < idle.viewVersion) {
        const next = await updates.next();
        assert.equal(next.done, false);
        if (next.value?.type === "batch") last = next.value.version;
      }
      const waiting = [updates.next(), updates.next(), updates.next()];
      await host.shutdown();
      for (const result of await Promise.all(waiting)) assert.equal(result.done, true);
    });

    test("breaking out of for await ends it and the thread goes on", async () => {
      const { host, threads, threadId } = await setUp(service.wrap);
      const subscription = threads.subscribe(threadId);
      await threads.view(threadId);
      await threads.send({ threadId, requestKey: "s", input: { text: "go" } });
      let seen = 0;
      for await (const _ of subscription) {
        seen++;
        break;
      }
      assert.equal(seen, 1);
      const view = await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
      assert.equal(view.items.at(-1)?.text, "one answer");
      await host.shutdown();
    });
  });
}

describe("shutdown ends subscriptions after the last batches", () => {
  test("batches waiting at shutdown are still read, then the iteration is done", async () => {
    const { host, threads, threadId } = await setUp((threads) => threads);
    const updates = threads.subscribe(threadId)[Symbol.asyncIterator]();
    const view = await threads.view(threadId);
    await threads.send({ threadId, requestKey: "s", input: { text: "go" } });
    const idle = await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
    await host.shutdown();
    let last = view.viewVersion;
    for (;;) {
      const next = await updates.next();
      if (next.done) break;
      if (next.value.type === "batch") last = next.value.version;
    }
    assert.ok(last >= idle.viewVersion, "the turn's batches were read before the end");
  });
});
