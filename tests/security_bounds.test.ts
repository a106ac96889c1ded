// Bounded store calls and checked numbers (DESIGN §11): a store call that
// never answers fails its command `storage_failure` after `storeTimeoutMs`
// (openHost included), shutdown returns with its signal even when `close()`
// hangs, and every duration option is an integer from 1 to 2^31−1 ms.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { defineAgent, FloretError, type KvStore, memoryStore, openHost } from "@floret/engine";
import { scriptedGateway } from "@floret/engine/testing";
import { threadApi } from "@floret/engine/http";
import { webFetchTool } from "@floret/engine/web-fetch";

const isCode = (code: string) => (error: unknown) =>
  error instanceof FloretError && error.code === code;

/** A memory store whose calls of the chosen kinds never answer while `hang` holds them. */
function hangingStore(): KvStore & { hang: Set<"getMany" | "list" | "commit" | "close"> } {
  const inner = memoryStore();
  const hang = new Set<"getMany" | "list" | "commit" | "close">();
  const never = new Promise<never>(() => {});
  return {
    hang,
    getMany: (keys) => (hang.has("getMany") ? never : inner.getMany(keys)),
    list: (selector, options) => (hang.has("list") ? never : inner.list(selector, options)),
    commit: (op) => (hang.has("commit") ? never : inner.commit(op)),
    close: () => (hang.has("close") ? never : inner.close()),
  };
}

const agent = () =>
  defineAgent({
    id: "a",
    systemPrompt: "Be brief.",
    gateway: scriptedGateway([{ text: "one" }, { text: "two" }]),
  });

describe("bounded store calls", () => {
  test("a commit that never answers fails the command storage_failure; the thread works once the store answers", async () => {
    const store = hangingStore();
    const host = await openHost({ store, storeTimeoutMs: 100 });
    const threads = host.threads({ agent: agent() });
    const { threadId } = await threads.create({ requestKey: "c" });
    store.hang.add("commit");
    await assert.rejects(
      threads.send({ threadId, requestKey: "s1", input: { text: "hi" } }),
      isCode("storage_failure"),
    );
    await assert.rejects(threads.create({ requestKey: "c2" }), isCode("storage_failure"));
    store.hang.clear();
    // The store answers again: the same key goes through and the turn completes.
    await threads.send({ threadId, requestKey: "s1", input: { text: "hi" } });
    const view = await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
    assert.equal(view.turns.at(-1)?.outcome, "completed");
    assert.equal(view.items.filter((item) => item.kind === "user").length, 1);
    await host.shutdown();
  });

  test("a read that never answers fails view storage_failure", async () => {
    const store = hangingStore();
    const host = await openHost({ store, storeTimeoutMs: 100 });
    const threads = host.threads({ agent: agent() });
    store.hang.add("getMany");
    await assert.rejects(threads.view("thread_unknown"), isCode("storage_failure"));
    store.hang.clear();
    await assert.rejects(threads.view("thread_unknown"), isCode("thread_not_found"));
    await host.shutdown();
  });

  test("openHost on a store that never answers rejects storage_failure", async () => {
    const store = hangingStore();
    store.hang.add("getMany");
    await assert.rejects(openHost({ store, storeTimeoutMs: 100 }), isCode("storage_failure"));
  });

  test("shutdown returns with its signal even when close() hangs", async () => {
    const store = hangingStore();
    const host = await openHost({ store });
    store.hang.add("close");
    const controller = new AbortController();
    const done = host.shutdown({ signal: controller.signal });
    setTimeout(() => controller.abort(), 50);
    await done;
  });
});

describe("duration options are integers from 1 to 2^31-1 ms", () => {
  const bad = [0, -1, 1.5, 2 ** 31, 1e10, Number.NaN, Number.POSITIVE_INFINITY];

  test("agent timeouts and retry delays", () => {
    for (const value of bad) {
      for (
        const extra of [
          { timeouts: { firstOutputMs: value } },
          { timeouts: { betweenOutputsMs: value } },
          { timeouts: { attemptMs: value } },
          { providerRetry: { delaysMs: [value] } },
          { providerRetry: { windowMs: value } },
        ]
      ) {
        assert.throws(
          () =>
            defineAgent({
              id: "a",
              systemPrompt: "x",
              gateway: scriptedGateway([]),
              ...extra,
            } as never),
          isCode("invalid_input"),
          `${JSON.stringify(extra)} ${value}`,
        );
      }
    }
    // The largest value is accepted.
    defineAgent({
      id: "a",
      systemPrompt: "x",
      gateway: scriptedGateway([]),
      timeouts: { attemptMs: 2 ** 31 - 1 },
    });
  });

  test("openHost, waitForIdle, threadApi and webFetchTool", async () => {
    for (const value of bad) {
      await assert.rejects(
        openHost({ store: memoryStore(), storeTimeoutMs: value }),
        isCode("invalid_input"),
      );
      await assert.rejects(
        openHost({ store: memoryStore(), leaseTtlMs: value }),
        isCode("invalid_input"),
      );
      assert.throws(() => webFetchTool({ timeoutMs: value }), isCode("invalid_input"));
    }
    const host = await openHost({ store: memoryStore() });
    const threads = host.threads({ agent: agent() });
    const { threadId } = await threads.create({ requestKey: "c" });
    for (const value of [1e10, 2 ** 31, 1.5, -1]) {
      await assert.rejects(
        threads.waitForIdle(threadId, { timeoutMs: value }),
        isCode("invalid_input"),
      );
      assert.throws(
        () => threadApi(threads, { authorize: () => true, pingIntervalMs: value } as never),
        isCode("invalid_input"),
      );
    }
    const app = threadApi(threads, { authorize: () => true });
    const response = await app.request(`/threads/${threadId}/idle?timeoutMs=10000000000`);
    assert.equal(response.status, 400);
    await host.shutdown();
  });
});
