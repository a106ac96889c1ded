/**
 * Run labels (DESIGN §11): `send({ labels })` reach `ToolContext.labels`
 * (always an object), permission functions, `ProviderRequest.labels` and the
 * run's observation events; the turn keeps them through queueing, retries,
 * approval waits and restarts; bad labels are `invalid_input`; the built-in
 * gateways never send them to a provider.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import {
  defineAgent,
  defineTool,
  FloretError,
  type Gateway,
  type KvStore,
  memoryStore,
  type ObservationEvent,
  openHost,
  type ThreadService,
  type ToolDefinition,
} from "@floret/engine";
import { type ScriptedGateway, scriptedGateway, type ScriptStep } from "@floret/engine/testing";
import { openAIChat, openAIResponses } from "@floret/engine/openai";
import { anthropicMessages } from "@floret/engine/anthropic";
import { overHttp } from "./support/over_http.ts";
import { fullThread } from "./support/context_host.ts";

const LABELS = { tenant: "acme", trace: "trace-7f3a" };

/** What the probe tool and its permission function saw, call by call. */
interface Seen {
  tool: Record<string, string>[];
  permission: { labels: Record<string, string>; callId: string; turnId: string }[];
}

/** A tool that records its context's labels; its permission asks when `careful` is set. */
function probeTool(seen: Seen): ToolDefinition {
  return defineTool({
    name: "probe",
    description: "Records its labels",
    input: z.object({}),
    effect: "write",
    permission: (_input, context) => {
      seen.permission.push({
        labels: { ...context.labels },
        callId: context.callId,
        turnId: context.turnId,
      });
      return context.labels.careful === "yes" ? "ask" : "allow";
    },
    execute: (_input, context) => {
      seen.tool.push({ ...context.labels });
      return "probed";
    },
  });
}

const probeCall: ScriptStep = { toolCalls: [{ name: "probe", arguments: {} }] };

function keepOpen(store: KvStore): KvStore {
  return { ...store, close: async () => {} };
}

async function open(
  store: KvStore,
  gateway: Gateway,
  seen: Seen,
  events: ObservationEvent[] = [],
): Promise<{ threads: ThreadService; shutdown: () => Promise<void> }> {
  const host = await openHost({ store, onEvent: (event) => events.push(event) });
  const threads = host.threads({
    agent: defineAgent({
      id: "labels",
      systemPrompt: "S",
      gateway,
      tools: [probeTool(seen)],
      providerRetry: { disabled: true },
    }),
  });
  return { threads, shutdown: () => host.shutdown() };
}

async function expectInvalid(promise: Promise<unknown>): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof FloretError, String(error));
    assert.equal(error.code, "invalid_input");
    return true;
  });
}

describe("run labels", () => {
  test("reach tools, permission functions, provider requests and the run's events", async () => {
    const seen: Seen = { tool: [], permission: [] };
    const events: ObservationEvent[] = [];
    const gateway = scriptedGateway([probeCall, { text: "done" }, probeCall, { text: "plain" }]);
    const { threads, shutdown } = await open(memoryStore(), gateway, seen, events);
    const { threadId } = await threads.create({ requestKey: "c" });
    const labelled = await threads.send({
      threadId,
      requestKey: "s1",
      input: { text: "probe" },
      labels: LABELS,
    });
    await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
    await threads.send({ threadId, requestKey: "s2", input: { text: "again" } });
    await threads.waitForIdle(threadId, { timeoutMs: 10_000 });

    assert.deepEqual(seen.tool, [LABELS, {}], "ToolContext.labels is {} without labels");
    assert.deepEqual(seen.permission.map((p) => p.labels), [LABELS, {}]);
    assert.equal(seen.permission[0].turnId, labelled.turnId);
    assert.ok(seen.permission[0].callId !== "");
    assert.deepEqual(gateway.requests[0].labels, LABELS);
    assert.deepEqual(gateway.requests[1].labels, LABELS, "every request of the run");
    assert.equal(gateway.requests[2].labels, undefined);
    // Labels are not part of the fingerprint: the model sees nothing of them.
    for (const request of gateway.requests) {
      assert.doesNotMatch(JSON.stringify(request.messages), /trace-7f3a/);
    }

    const ofTurn = events.filter((event) => event.turnId === labelled.turnId);
    const types = new Set(ofTurn.map((event) => event.type));
    for (const type of ["turn.started", "provider.attempt", "tool.dispatched", "tool.result"]) {
      assert.ok(types.has(type as ObservationEvent["type"]), `${type} observed`);
    }
    assert.ok(types.has("turn.ended"));
    for (const event of ofTurn) assert.deepEqual(event.labels, LABELS, event.type);
    const plain = events.filter((event) => event.turnId && event.turnId !== labelled.turnId);
    assert.ok(plain.length > 0);
    for (const event of plain) assert.equal(event.labels, undefined, event.type);
    await shutdown();
  });

  test("an approval wait across a restart keeps them: the resumed run's tool and requests see them", async () => {
    const store = keepOpen(memoryStore());
    const seen: Seen = { tool: [], permission: [] };
    const careful = { ...LABELS, careful: "yes" };
    const first = await open(store, scriptedGateway([probeCall]), seen);
    const { threadId } = await first.threads.create({ requestKey: "c" });
    await first.threads.send({ threadId, requestKey: "s", input: { text: "go" }, labels: careful });
    const waiting = await first.threads.waitForIdle(threadId, { timeoutMs: 10_000 });
    assert.equal(waiting.status, "waiting");
    assert.deepEqual(seen.permission.map((p) => p.labels), [careful]);
    await first.shutdown();

    const events: ObservationEvent[] = [];
    const gateway = scriptedGateway([{ text: "after restart" }]);
    const second = await open(store, gateway, seen, events);
    const pending = (await second.threads.view(threadId)).pending[0];
    await second.threads.respond({
      threadId,
      requestKey: "approve",
      interactionId: pending.id,
      decision: "approve",
    });
    const done = await second.threads.waitForIdle(threadId, { timeoutMs: 10_000 });
    assert.equal(done.turns.at(-1)?.outcome, "completed");
    assert.deepEqual(seen.tool, [careful]);
    assert.deepEqual(gateway.requests[0].labels, careful);
    const resolved = events.find((event) => event.type === "interaction.resolved");
    assert.deepEqual(resolved?.labels, careful);
    assert.ok(events.filter((event) => event.turnId).every((event) => event.labels?.careful));
    await second.shutdown();
  });

  test("a queued send keeps them until its turn; a retry runs with its source's labels", async () => {
    const seen: Seen = { tool: [], permission: [] };
    const gateway = scriptedGateway([
      { text: "first", delayMs: 50 },
      { text: "queued" },
      { text: "retried" },
    ]);
    const { threads, shutdown } = await open(memoryStore(), gateway, seen);
    const { threadId } = await threads.create({ requestKey: "c" });
    await threads.send({ threadId, requestKey: "s1", input: { text: "one" } });
    const queued = await threads.send({
      threadId,
      requestKey: "s2",
      input: { text: "two" },
      labels: { origin: "queue" },
    });
    assert.equal(queued.queued, true);
    while ((await threads.view(threadId)).turns.length < 2) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
    assert.equal(gateway.requests[0].labels, undefined);
    assert.deepEqual(gateway.requests[1].labels, { origin: "queue" });
    await threads.retry({ threadId, requestKey: "r" });
    await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
    assert.deepEqual(gateway.requests[2].labels, { origin: "queue" });
    await shutdown();
  });

  test("over HTTP: threadClient sends them; bad labels are invalid_input there too", async () => {
    const seen: Seen = { tool: [], permission: [] };
    const gateway = scriptedGateway([probeCall, { text: "done" }]);
    const host = await openHost({ store: memoryStore() });
    const client = overHttp(host.threads({
      agent: defineAgent({ id: "h", systemPrompt: "S", gateway, tools: [probeTool(seen)] }),
    }));
    const { threadId } = await client.create({ requestKey: "c" });
    await client.send({ threadId, requestKey: "s", input: { text: "go" }, labels: LABELS });
    await client.waitForIdle(threadId, { timeoutMs: 10_000 });
    assert.deepEqual(seen.tool, [LABELS]);
    assert.deepEqual(gateway.requests[0].labels, LABELS);
    await expectInvalid(client.send({
      threadId,
      requestKey: "bad",
      input: { text: "go" },
      labels: { k: 1 } as unknown as Record<string, string>,
    }));
    await host.shutdown();
  });

  test("more than 16 labels, unbounded keys or values, or other shapes are invalid_input", async () => {
    const seen: Seen = { tool: [], permission: [] };
    const gateway = scriptedGateway([]);
    const { threads, shutdown } = await open(memoryStore(), gateway, seen);
    const { threadId } = await threads.create({ requestKey: "c" });
    const seventeen = Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, "v"]));
    const cases: unknown[] = [
      seventeen,
      { "": "v" },
      { ["k".repeat(129)]: "v" },
      { k: "v".repeat(1025) },
      { k: 1 },
      { k: null },
      { k: ["v"] },
      ["v"],
      null,
      "labels",
      JSON.parse('{"__proto__": "v"}'),
      { k: "\ud800" },
    ];
    for (const [index, labels] of cases.entries()) {
      await expectInvalid(threads.send({
        threadId,
        requestKey: `k${index}`,
        input: { text: "go" },
        labels: labels as Record<string, string>,
      }));
    }
    const view = await threads.view(threadId);
    assert.equal(view.turns.length, 0);
    assert.equal(gateway.requests.length, 0);
    // Sixteen bounded pairs are fine.
    const sixteen = Object.fromEntries(
      Array.from({ length: 16 }, (_, i) => [`${"k".repeat(120)}${i}`, "v".repeat(1024)]),
    );
    const ok = await threads.send({
      threadId,
      requestKey: "k0",
      input: { text: "go" },
      labels: sixteen,
    });
    assert.equal(ok.queued, false);
    await shutdown();
  });
});

describe("the built-in gateways never send labels to a provider", () => {
  const MARK_KEY = "label-key-9c1e";
  const MARK_VALUE = "label-value-5d2b";

  /** A fetch that keeps everything a gateway sends and refuses it (the turn fails at once). */
  function capturing(): { fetch: typeof globalThis.fetch; sent: string[] } {
    const sent: string[] = [];
    const fetch = ((input: RequestInfo | URL, init?: RequestInit) => {
      const headers = [...new Headers(init?.headers).entries()].map(([k, v]) => `${k}: ${v}`);
      sent.push(`${String(input)}\n${headers.join("\n")}\n${String(init?.body ?? "")}`);
      return Promise.resolve(
        new Response(JSON.stringify({ error: { type: "invalid_request_error", message: "no" } }), {
          status: 400,
          headers: { "content-type": "application/json" },
        }),
      );
    }) as typeof globalThis.fetch;
    return { fetch, sent };
  }

  const gateways: [string, (fetch: typeof globalThis.fetch) => Gateway][] = [
    ["Chat Completions", (fetch) => openAIChat({ model: "gpt-5", apiKey: "sk-test", fetch })],
    ["Responses", (fetch) => openAIResponses({ model: "gpt-5", apiKey: "sk-test", fetch })],
    [
      "Anthropic Messages",
      (fetch) => anthropicMessages({ model: "claude-x", apiKey: "sk-ant-test", fetch }),
    ],
  ];
  for (const [name, make] of gateways) {
    test(name, async () => {
      const { fetch, sent } = capturing();
      const wrapped: ScriptedGateway | Gateway = make(fetch);
      let labelled: unknown;
      // The request the gateway is given carries the labels; what it sends does not.
      const spy: Gateway = {
        info: wrapped.info,
        stream(request, options) {
          labelled = request.labels;
          return wrapped.stream(request, options);
        },
      };
      const seen: Seen = { tool: [], permission: [] };
      const { threads, shutdown } = await open(memoryStore(), spy, seen);
      const { threadId } = await threads.create({ requestKey: "c" });
      await threads.send({
        threadId,
        requestKey: "s",
        input: { text: "hello" },
        labels: { [MARK_KEY]: MARK_VALUE },
      });
      const view = await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
      assert.equal(view.turns.at(-1)?.outcome, "failed");
      assert.deepEqual(labelled, { [MARK_KEY]: MARK_VALUE });
      assert.ok(sent.length > 0);
      for (const request of sent) {
        assert.ok(request.includes("hello"), "the captured request is the turn's");
        assert.ok(!request.includes(MARK_KEY), "no label key");
        assert.ok(!request.includes(MARK_VALUE), "no label value");
      }
      await shutdown();
    });
  }
});

describe("a compaction inside a labelled run", () => {
  test("its summary requests carry the run's labels too", async () => {
    const e = await fullThread();
    await e.say("HEAD-MARKER next question", { labels: { tenant: "acme" } });
    assert.ok(e.gateway.summaries.length > 0, "the send compacted first");
    for (const summary of e.gateway.summaries) assert.deepEqual(summary.labels, { tenant: "acme" });
    assert.deepEqual(e.gateway.requests.at(-1)?.labels, { tenant: "acme" });
    await e.host.shutdown();
  });
});
