// Precise points of DESIGN §8 / §10 and issue #9 about what a run reports:
// steer, queue and todos, structured results, and secrets kept out of errors.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import {
  defineAgent,
  defineTool,
  type Gateway,
  memoryStore,
  openHost,
  ProviderError,
  type ProviderEvent,
} from "@floret/engine";
import { scriptedGateway } from "@floret/engine/testing";
import { engine, FAST_RETRY } from "./support/engine.ts";
import { overHttp } from "./support/over_http.ts";
import {
  answer,
  askCity,
  contains,
  editQueued,
  heldTool,
  isCode,
  keepOpen,
  sendText,
  sendWait,
  settle,
  steer,
  toolMessages,
  tools,
  userTexts,
} from "./support/interactions.ts";

describe("steer, queue and todos precise points", () => {
  test("steer adds a user item to the running turn; its text is in the turn's next request", async () => {
    // A write: the third wave ends `read`/`none` calls on a steer (steer_tools.test.ts).
    const { tool: slow, gate, started } = heldTool({
      name: "slow",
      output: "slow done",
      effect: "write",
    });
    const e = await engine([
      { toolCalls: [{ name: "slow", arguments: {} }] },
      { text: "steered" },
    ], { tools: [slow] });
    const sent = await sendText(e, "go", "s");
    await started.promise;
    const { view } = await steer(e, "be brief", "st");
    const steered = view.items.filter((i) => i.kind === "user").at(-1);
    assert.equal(steered?.text, "be brief");
    assert.equal(steered?.turnId, sent.turnId, "same turn");
    gate.resolve();
    const done = await settle(e);
    assert.equal(done.turns.length, 1);
    assert.ok(userTexts(e.gateway.requests[1].messages).includes("be brief"));
    assert.equal(toolMessages(e.gateway.requests[1].messages)[0].output, "slow done");
    await e.host.shutdown();
  });

  test("a new thread has no todos; editQueued with a stale expected text conflicts and writes nothing", async () => {
    const e = await engine([askCity]);
    const fresh = await e.threads.view(e.threadId);
    assert.deepEqual((fresh as unknown as { todos: unknown[] }).todos, []);
    await sendWait(e, "trip");
    const queued = await sendText(e, "first text", "q");
    const queueId = queued.view.queue[0].id;
    await assert.rejects(
      editQueued(e, queueId, "new", "not the text", "e"),
      isCode("request_conflict"),
    );
    const view = await e.threads.view(e.threadId);
    assert.equal(view.queue[0].text, "first text");
    await assert.rejects(
      e.threads.promoteQueued({ threadId: e.threadId, requestKey: "p", queueId }),
      isCode("thread_busy"),
    );
    await e.host.shutdown();
  });
});

describe("structured results", () => {
  test("Date, Map, Set, BigInt, undefined and NaN read back decoded: live, after restart, in a fork; the model sees output only", async () => {
    const value = () => ({
      when: new Date("2026-03-04T05:06:07.000Z"),
      index: new Map<string, unknown>([["a", new Set([1, 2])], ["b", { at: new Date(0) }]]),
      big: 12345678901234567890n,
      missing: undefined,
      list: [undefined, Number.NaN, -Infinity, "x"],
      plain: { n: 1, s: "two", t: true, z: null },
      re: /a+b/gi,
      negativeZero: -0,
      url: new URL("https://example.test/a?b=1"), // read back as JSON would write it: its text
    });
    const rich = defineTool({
      name: "rich",
      description: "r",
      input: z.object({}),
      execute: () => ({ output: "see structured", structured: value() }),
    });
    const store = memoryStore();
    const e = await engine([
      { toolCalls: [{ name: "rich", arguments: {} }] },
      { text: "done" },
    ], { tools: [rich], store: keepOpen(store) });
    const live = await sendWait(e, "go");
    const item = () => live.items.find((i) => i.tool?.name === "rich")!.tool!;
    assert.equal(item().status, "completed");
    const expected = () => ({ ...value(), url: "https://example.test/a?b=1" });
    assert.deepEqual(item().structured, expected());
    const structured = item().structured as ReturnType<typeof value>;
    assert.ok(structured.when instanceof Date);
    assert.ok("missing" in structured, "an undefined member is kept");
    assert.equal(toolMessages(e.gateway.requests[1].messages)[0].output, "see structured");
    assert.ok(!JSON.stringify(e.gateway.requests[1].messages).includes("2026-03-04"));
    const forked = await e.threads.fork({ threadId: e.threadId, requestKey: "f" });
    const forkItem = forked.view.items.find((i) => i.tool?.name === "rich")!.tool!;
    assert.deepEqual(forkItem.structured, expected());
    // Over HTTP the view is JSON: readable, never a failed response.
    const remote = await overHttp(e.threads).view(e.threadId);
    const wire = remote.items.find((i) => i.tool?.name === "rich")!.tool!.structured as Record<
      string,
      unknown
    >;
    assert.equal(wire.when, "2026-03-04T05:06:07.000Z");
    assert.equal(wire.big, "12345678901234567890");
    await e.host.shutdown();

    const host = await openHost({ store });
    const threads = host.threads({
      agent: defineAgent({ id: "a", systemPrompt: "s", gateway: scriptedGateway([]) }),
    });
    const reloaded = await threads.view(e.threadId);
    const again = reloaded.items.find((i) => i.tool?.name === "rich")!.tool!;
    assert.deepEqual(again.structured, expected());
    const history = await threads.history(e.threadId);
    assert.deepEqual(
      history.items.find((i) => i.tool?.name === "rich")!.tool!.structured,
      expected(),
    );
    await host.shutdown();
  });

  test("a cycle, a function or a symbol is refused as the call's error the model sees; the turn goes on", async () => {
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    const shared = { x: 1 };
    const values: unknown[] = [cyclic, { f: () => 1 }, { s: Symbol("s") }, {
      one: shared,
      two: shared,
    }];
    const tool = defineTool({
      name: "odd",
      description: "o",
      input: z.object({ i: z.number() }),
      execute: ({ i }) => ({ output: `value ${i}`, structured: values[i] }),
    });
    const e = await engine([
      { toolCalls: values.map((_, i) => ({ name: "odd", arguments: { i } })) },
      { text: "done" },
    ], { tools: [tool] });
    const view = await sendWait(e, "go");
    assert.equal(view.turns[0].outcome, "completed");
    assert.deepEqual(tools(view).map((t) => t.status), ["error", "error", "error", "completed"]);
    const outputs = toolMessages(e.gateway.requests[1].messages).map((m) => m.output);
    assert.match(outputs[0], /cycle/);
    assert.match(outputs[1], /function/);
    assert.match(outputs[2], /symbol/);
    assert.deepEqual(
      tools(view)[3].structured,
      { one: { x: 1 }, two: { x: 1 } },
      "a shared object is no cycle",
    );
    await e.host.shutdown();
  });
});

describe("secrets in what a run reports", () => {
  test("a provider error echoing the request never carries the secret into events, the view or the store", async () => {
    const SECRET = "echoed-secret-Kp3";
    let calls = 0;
    // Answers the first request with the question; then fails, quoting the request it got.
    const gateway: Gateway = {
      info: { provider: "echo", model: "echo", stateKey: "echo", capabilities: {} },
      async *stream(request): AsyncIterable<ProviderEvent> {
        calls++;
        if (calls === 1) {
          yield { type: "tool-call-start", callId: "c1", name: "ask_user" };
          yield {
            type: "tool-call-delta",
            callId: "c1",
            argumentsDelta: JSON.stringify({
              questions: [{ id: "pw", prompt: "Password?", secret: true }],
            }),
          };
          yield { type: "tool-call-end", callId: "c1" };
          yield { type: "finish", reason: "tool_calls" };
          return;
        }
        const echo = `bad request: ${JSON.stringify(request.messages).slice(-400)}`;
        throw new ProviderError(echo, { retry: calls === 2 ? "retryable" : "never", status: 400 });
      },
    };
    const store = memoryStore();
    const events: string[] = [];
    const host = await openHost({ store, onEvent: (event) => events.push(JSON.stringify(event)) });
    const threads = host.threads({
      agent: defineAgent({ id: "a", systemPrompt: "s", gateway, providerRetry: FAST_RETRY }),
    });
    const { threadId } = await threads.create({ requestKey: "c" });
    await sendText({ threads, threadId }, "login", "s");
    const waiting = await settle({ threads: threads, threadId });
    await answer({ threads: threads, threadId }, waiting.pending[0].id, [{
      questionId: "pw",
      value: SECRET,
    }]);
    const done = await settle({ threads: threads, threadId });
    assert.equal(calls, 3);
    assert.equal(done.turns.at(-1)?.failure?.code, "provider_error");
    assert.match(done.turns.at(-1)!.failure!.message, /bad request/);
    assert.ok(!JSON.stringify(done).includes(SECRET), "the view never shows it");
    assert.ok(events.some((event) => event.includes("provider.retry")));
    assert.ok(!events.some((event) => event.includes(SECRET)), "events never carry it");
    const needle = new TextEncoder().encode(SECRET);
    const rows = await store.list({ prefix: [] });
    assert.equal(rows.filter((row) => contains(row.value, needle)).length, 0);
    await host.shutdown();
  });
});
