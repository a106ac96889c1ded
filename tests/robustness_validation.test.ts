/**
 * Issue 8, causes 6 and 7: every public method and option is validated; a
 * wrong type anywhere is `invalid_input` (never a `TypeError`), any id that
 * names no thread is `thread_not_found`, `timeoutMs` must be a finite
 * non-negative number, stored values of the wrong shape are
 * `storage_failure`, and a store whose `close()` throws still lets shutdown
 * finish with `storage_failure`.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import { defineAgent, defineTool, type KvKey, memoryStore, openHost } from "@floret/engine";
import { scriptedGateway } from "@floret/engine/testing";
import { engine } from "./support/engine.ts";
import {
  faultyStore,
  misbehavingGateway,
  rejectsWith,
  TIMEOUT,
  watchdog,
} from "./support/robust.ts";

const WATCHDOG_MS = 15_000;
const gateway = () => scriptedGateway([{ text: "hi" }]);
// deno-lint-ignore no-explicit-any
type Loose = any;

describe("robustness: validation of every public entry", () => {
  test("defineTool with undefined, null or wrong types is invalid_input", TIMEOUT, async () => {
    const good = {
      name: "t",
      description: "d",
      input: z.object({}),
      execute: () => "x",
    };
    const bad: unknown[] = [
      undefined,
      null,
      5,
      "tool",
      { ...good, name: 5 },
      { ...good, name: "has space" },
      { ...good, description: null },
      { ...good, input: { parse: () => 1 } },
      { ...good, input: undefined },
      { ...good, execute: "no" },
      { ...good, effect: "delete" },
      { ...good, permission: 3 },
    ];
    for (const spec of bad) {
      await rejectsWith(() => defineTool(spec as Loose), "invalid_input");
    }
    assert.equal(defineTool(good).name, "t");
  });

  test("defineAgent with wrong types is invalid_input", TIMEOUT, async () => {
    const good = { id: "a", systemPrompt: "s", gateway: gateway() };
    const bad: unknown[] = [
      undefined,
      null,
      [],
      { ...good, id: 3 },
      { ...good, id: "  " },
      { ...good, systemPrompt: null },
      { ...good, gateway: {} },
      { ...good, gateway: null },
      { ...good, tools: 5 },
      { ...good, tools: [5] },
      { ...good, tools: [null] },
      { ...good, context: null },
      { ...good, context: { windowTokens: -1 } },
      { ...good, maxSteps: "3" },
      { ...good, maxSteps: Number.NaN },
      { ...good, providerRetry: null },
      { ...good, providerRetry: { delaysMs: "1" } },
      { ...good, providerRetry: { delaysMs: [Number.POSITIVE_INFINITY] } },
      { ...good, timeouts: { firstOutputMs: "5" } },
      { ...good, timeouts: null },
    ];
    for (const config of bad) {
      await rejectsWith(() => defineAgent(config as Loose), "invalid_input");
    }
  });

  test(
    "openHost, threads() and shutdown() with null or wrong types are invalid_input",
    TIMEOUT,
    async () => {
      await watchdog(WATCHDOG_MS, async () => {
        for (
          const options of [
            undefined,
            null,
            {},
            { store: null },
            { store: {} },
            { store: memoryStore(), hostId: 5 },
            { store: memoryStore(), leaseTtlMs: "1000" },
            { store: memoryStore(), leaseTtlMs: Number.NaN },
            { store: memoryStore(), onEvent: "log" },
          ]
        ) {
          await rejectsWith(openHost(options as Loose), "invalid_input");
        }
        const host = await openHost({ store: memoryStore() });
        for (const options of [undefined, null, 5, {}, { agent: {} }, { agent: null }]) {
          await rejectsWith(() => host.threads(options as Loose), "invalid_input");
        }
        await rejectsWith(host.shutdown(null as Loose), "invalid_input");
        await rejectsWith(host.shutdown({ signal: "now" } as Loose), "invalid_input");
        await host.shutdown();
      });
    },
  );

  test("null or wrong-typed command inputs and options are invalid_input", TIMEOUT, async () => {
    await watchdog(WATCHDOG_MS, async () => {
      const e = await engine([{ text: "hi" }]);
      const t: Loose = e.threads;
      const threadId = e.threadId;
      const cases: [string, () => Promise<unknown>][] = [
        ["create(null)", () => t.create(null)],
        ["create(undefined)", () => t.create(undefined)],
        ["create(title: 5)", () => t.create({ requestKey: "k", title: 5 })],
        ["send(null)", () => t.send(null)],
        ["send(input: null)", () => t.send({ threadId, requestKey: "k", input: null })],
        ["send(text: 5)", () => t.send({ threadId, requestKey: "k", input: { text: 5 } })],
        ["send(requestKey: 5)", () => t.send({ threadId, requestKey: 5, input: { text: "x" } })],
        ["cancel(mode)", () => t.cancel({ threadId, requestKey: "k", mode: "later" })],
        ["retry(turnId: 5)", () => t.retry({ threadId, requestKey: "k", turnId: 5 })],
        ["setTitle(title: null)", () => t.setTitle({ threadId, requestKey: "k", title: null })],
        ["list(null)", () => t.list(null)],
        ["list(limit: '5')", () => t.list({ limit: "5" })],
        ["history(null)", () => t.history(threadId, null)],
        ["history(limit: 0)", () => t.history(threadId, { limit: 0 })],
        ["waitForIdle(null)", () => t.waitForIdle(threadId, null)],
        ["waitForIdle(signal: 1)", () => t.waitForIdle(threadId, { signal: 1 })],
      ];
      for (const [name, call] of cases) {
        const error = await rejectsWith(call(), "invalid_input").catch((failure) => {
          throw new Error(`${name}: ${failure.message}`);
        });
        assert.ok(error.message.length > 0, name);
      }
      await rejectsWith(() => t.subscribe(threadId, null), "invalid_input");
      await e.host.shutdown();
    });
  });

  test(
    "waitForIdle: timeoutMs of NaN, a string, Infinity or negative is invalid_input",
    TIMEOUT,
    async () => {
      await watchdog(WATCHDOG_MS, async () => {
        const e = await engine([{ hang: true }]);
        await e.threads.send({ threadId: e.threadId, requestKey: "s", input: { text: "go" } });
        for (const timeoutMs of [Number.NaN, "10", Number.POSITIVE_INFINITY, -1, null]) {
          await rejectsWith(
            e.threads.waitForIdle(e.threadId, { timeoutMs } as Loose),
            "invalid_input",
          );
        }
        // A valid bound is honoured on a thread that stays running.
        await rejectsWith(e.threads.waitForIdle(e.threadId, { timeoutMs: 20 }), "timeout");
        await e.host.shutdown();
      });
    },
  );

  test(
    "any id that names no thread is thread_not_found, lone surrogates included",
    TIMEOUT,
    async () => {
      await watchdog(WATCHDOG_MS, async () => {
        const e = await engine([{ text: "hi" }]);
        const t: Loose = e.threads;
        for (const id of ["\uD800", "thread_\uDC00x", "nope", "", 5, null, {}]) {
          await rejectsWith(t.view(id), "thread_not_found");
          await rejectsWith(t.history(id), "thread_not_found");
          await rejectsWith(t.waitForIdle(id), "thread_not_found");
          await rejectsWith(t.context(id), "thread_not_found");
          await rejectsWith(
            t.send({ threadId: id, requestKey: "k", input: { text: "x" } }),
            "thread_not_found",
          );
          await rejectsWith(t.cancel({ threadId: id, requestKey: "k" }), "thread_not_found");
          await rejectsWith(t.delete({ threadId: id, requestKey: "k" }), "thread_not_found");
        }
        await e.host.shutdown();
      });
    },
  );

  test(
    "context() on a gateway without capabilities (or without stateKey) works",
    TIMEOUT,
    async () => {
      await watchdog(WATCHDOG_MS, async () => {
        const bare = misbehavingGateway([{ kind: "events", events: [] }], {});
        const info = bare.info as unknown as Record<string, unknown>;
        delete info.capabilities;
        delete info.stateKey;
        const host = await openHost({ store: memoryStore() });
        const threads = host.threads({
          agent: defineAgent({ id: "a", systemPrompt: "s", gateway: bare }),
        });
        const { threadId } = await threads.create({ requestKey: "c" });
        const figures = await threads.context(threadId);
        assert.equal(typeof figures.estimateTokens, "number");
        await host.shutdown();
      });
    },
  );

  test(
    "stored values of the wrong shape are storage_failure, never a TypeError",
    TIMEOUT,
    async () => {
      await watchdog(WATCHDOG_MS, async () => {
        const store = faultyStore();
        const host = await openHost({ store });
        const threads = host.threads({
          agent: defineAgent({ id: "a", systemPrompt: "s", gateway: gateway() }),
        });
        const { threadId } = await threads.create({ requestKey: "c" });
        await host.shutdown();
        const encode = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));
        const threadKey: KvKey = ["thread", threadId];
        const [stored] = await store.inner.getMany([threadKey]);
        assert.ok(stored, `thread record under ${JSON.stringify(threadKey)}`);
        const record = JSON.parse(new TextDecoder().decode(stored.value));
        for (
          const wrong of [
            5,
            null,
            [],
            { ...record, queue: "none" },
            { ...record, status: 1 },
            { ...record, active: { turnId: 5 } },
          ]
        ) {
          await store.poke(threadKey, encode(wrong));
          const again = await openHost({ store });
          const t = again.threads({
            agent: defineAgent({ id: "a", systemPrompt: "s", gateway: gateway() }),
          });
          await rejectsWith(t.view(threadId), "storage_failure");
          await again.shutdown();
        }
        // A journal entry and a request record of the wrong shape.
        await store.poke(threadKey, stored.value);
        const fresh = await openHost({ store });
        const service = fresh.threads({
          agent: defineAgent({ id: "a", systemPrompt: "s", gateway: gateway() }),
        });
        await service.send({ threadId, requestKey: "s", input: { text: "hi" } });
        await service.waitForIdle(threadId, { timeoutMs: 10_000 });
        await fresh.shutdown();
        const entries = await store.inner.list({ prefix: ["entry", threadId] });
        assert.ok(entries.length > 0);
        await store.poke(entries[0].key, encode({ kind: "turn_started", seq: "one" }));
        const third = await openHost({ store });
        await rejectsWith(
          third.threads({
            agent: defineAgent({ id: "a", systemPrompt: "s", gateway: gateway() }),
          }).view(threadId),
          "storage_failure",
        );
        await third.shutdown();
        await store.poke(["req", threadId, "s"], encode({ op: 5 }));
        const fourth = await openHost({ store });
        const replaying = fourth.threads({
          agent: defineAgent({ id: "a", systemPrompt: "s", gateway: gateway() }),
        });
        await rejectsWith(
          replaying.send({ threadId, requestKey: "s", input: { text: "hi" } }),
          "storage_failure",
        );
        await fourth.shutdown();
        // A wrong schema marker fails openHost itself.
        await store.poke(["meta", "schema"], encode({ version: "1" }));
        await rejectsWith(openHost({ store }), "storage_failure");
      });
    },
  );

  test(
    "a store whose close() throws: shutdown rejects storage_failure, the host stays closed",
    TIMEOUT,
    async () => {
      await watchdog(WATCHDOG_MS, async () => {
        const store = faultyStore();
        const host = await openHost({ store });
        const threads = host.threads({
          agent: defineAgent({ id: "a", systemPrompt: "s", gateway: gateway() }),
        });
        const { threadId } = await threads.create({ requestKey: "c" });
        store.faults.closeThrows = true;
        await rejectsWith(host.shutdown(), "storage_failure");
        await rejectsWith(threads.view(threadId), "host_closed");
        await rejectsWith(threads.create({ requestKey: "d" }), "host_closed");
      });
    },
  );

  test("an agentFactory that throws anything gives a FloretError", TIMEOUT, async () => {
    await watchdog(WATCHDOG_MS, async () => {
      const host = await openHost({ store: memoryStore() });
      const threads = host.threads({
        agentFactory: () => {
          throw "no agent today";
        },
      });
      const { threadId } = await threads.create({ requestKey: "c" });
      await rejectsWith(
        threads.send({ threadId, requestKey: "s", input: { text: "x" } }),
        "invalid_input",
      );
      const view = await threads.view(threadId);
      assert.equal(view.status, "idle");
      await host.shutdown();
    });
  });
});
