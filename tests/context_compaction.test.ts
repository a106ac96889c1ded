/**
 * Context management through the public API: budgets, automatic compaction
 * (threshold, confirmed usage, overflow), failing summaries and the circuit
 * breaker, manual compaction, accounting, restart and fork after a compaction.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import {
  defineAgent,
  memoryStore,
  type ObservationEvent,
  openHost,
  ProviderError,
} from "@floret/engine";
import { roughTokenCount } from "@floret/engine/tokens";
import { contextGateway, textOf, words } from "./support/context_gateway.ts";
import { CONTEXT_SYSTEM, setup } from "./support/context_host.ts";

const SYSTEM = CONTEXT_SYSTEM;

function requestTokens(request: { messages: unknown[] }): number {
  return roughTokenCount(JSON.stringify(request.messages));
}

describe("automatic compaction", () => {
  test("a long conversation crosses the threshold many times and always fits", async () => {
    const e = await setup();
    for (let i = 0; i < 30; i++) {
      const view = await e.say(`turn ${i}: ${words(700, `t${i}x`)}`);
      assert.equal(view.turns.at(-1)?.outcome, "completed", `turn ${i}`);
    }
    const figures = await e.threads.context(e.threadId);
    const compacted = figures.compactions.filter((c) => c.status === "compacted");
    assert.ok(compacted.length >= 3, `compactions: ${compacted.length}`);
    for (const record of compacted) assert.ok(record.tokensBefore! > record.tokensAfter!);
    assert.equal(figures.compactions.length, e.gateway.summaries.length);
    for (const request of e.gateway.requests) {
      assert.equal(request.messages[0].role, "system");
      assert.equal((request.messages[0] as { text: string }).text, SYSTEM);
      assert.ok(requestTokens(request) < 8000, `request of ${requestTokens(request)} tokens`);
    }
    for (const summary of e.gateway.summaries) {
      assert.equal(summary.messages[0].role, "system");
      assert.notEqual((summary.messages[0] as { text: string }).text, SYSTEM);
      assert.deepEqual(summary.tools, []);
      assert.ok(summary.maxOutputTokens! <= 2000);
    }
    // The latest summary is in the last request, right after the system prompt; the
    // current user input is there verbatim.
    const last = e.gateway.requests.at(-1)!;
    assert.match(
      (last.messages[1] as { text: string }).text,
      new RegExp(`SUMMARY-${e.gateway.summaries.length}`),
    );
    assert.match((last.messages.at(-1) as { text: string }).text, /^turn 29: /);
    // Every item is still in the view and history.
    const view = await e.threads.view(e.threadId);
    assert.equal(view.items.length, 60);
    assert.ok(figures.estimateTokens < 7200);
    await e.host.shutdown();
  });

  test("confirmed usage over the threshold compacts before the next request, never after a final answer", async () => {
    const e = await setup();
    await e.say("hello there");
    e.gateway.answers.push({ text: "big", usage: { inputTokens: 7300, outputTokens: 10 } });
    await e.say("second");
    assert.equal(e.gateway.summaries.length, 0, "no compaction after a final response");
    await e.say("third");
    assert.equal(e.gateway.summaries.length, 1);
    const figures = await e.threads.context(e.threadId);
    assert.deepEqual(figures.compactions.map((c) => c.status), ["compacted"]);
    await e.host.shutdown();
  });

  test("a provider overflow compacts once, even below the threshold, and resends once", async () => {
    const e = await setup();
    await e.say(`one ${words(400)}`);
    await e.say(`two ${words(400)}`);
    e.gateway.answers.push({
      error: new ProviderError("too long", { retry: "retryable", kind: "context_overflow" }),
    });
    const view = await e.say("three");
    assert.equal(view.turns.at(-1)?.outcome, "completed");
    assert.equal(e.gateway.summaries.length, 1);
    const [, , overflowed, resent] = e.gateway.requests;
    assert.doesNotMatch(textOf(overflowed), /SUMMARY-1/);
    assert.match(textOf(resent), /SUMMARY-1/);
    assert.match(textOf(resent), /three/);
    await e.host.shutdown();
  });

  test("a second overflow fails the turn with context_compaction_limit", async () => {
    const e = await setup();
    await e.say("one");
    await e.say("two");
    const overflow = () => ({
      error: new ProviderError("too long", { retry: "never", kind: "context_overflow" as const }),
    });
    e.gateway.answers.push(overflow(), overflow());
    const view = await e.say("three");
    assert.equal(view.turns.at(-1)?.failure?.code, "context_compaction_limit");
    assert.equal(view.items.at(-1)?.text, "three", "the user item stays");
    await e.host.shutdown();
  });

  test("failed summaries install nothing, send the request unchanged, and trip the breaker after two", async () => {
    const e = await setup();
    const failing = () => ({
      error: new ProviderError("down", { retry: "never", kind: "server" as const }),
    });
    await e.say("start");
    for (let i = 0; i < 3; i++) {
      e.gateway.answers.push({ text: `a${i}`, usage: { inputTokens: 7300 } });
      e.gateway.summaryAnswers.push(failing());
      const view = await e.say(`q${i}`);
      assert.equal(view.turns.at(-1)?.outcome, "completed");
    }
    await e.say("after");
    // q0 pushed usage over T; q1 and q2 compacted and failed; the breaker stops "after".
    assert.equal(e.gateway.summaries.length, 2);
    const figures = await e.threads.context(e.threadId);
    assert.deepEqual(figures.compactions.map((c) => c.status), ["failed", "failed"]);
    for (const request of e.gateway.requests) assert.doesNotMatch(textOf(request), /SUMMARY/);
    // A manual compaction that succeeds resets the breaker.
    await e.host.shutdown();
  });

  test("an empty summary is a failure and a request over the hard limit is never sent", async () => {
    const e = await setup();
    await e.say("start");
    e.gateway.answers.push({ text: "a", usage: { inputTokens: 7990 } });
    await e.say("push");
    e.gateway.summaryAnswers.push({ text: "   " });
    const sent = e.gateway.requests.length;
    const view = await e.say("next");
    assert.equal(view.turns.at(-1)?.failure?.code, "context_compaction_limit");
    assert.equal(e.gateway.requests.length, sent, "nothing was sent");
    const figures = await e.threads.context(e.threadId);
    assert.deepEqual(figures.compactions.map((c) => c.status), ["failed"]);
    await e.host.shutdown();
  });
});

describe("budgets", () => {
  test("an output budget that fills the window fails the turn before any request", async () => {
    const e = await setup({ windowTokens: 8000, maxOutputTokens: 8000 });
    const view = await e.say("hi");
    assert.equal(view.turns.at(-1)?.failure?.code, "context_budget_invalid");
    assert.equal(view.items[0].text, "hi");
    assert.equal(e.gateway.requests.length + e.gateway.summaries.length, 0);
    await e.host.shutdown();
  });

  test("a system prompt that alone overflows fails with context_fixed_overhead, without prompt text", async () => {
    const prompt = "SECRETPROMPT " + words(9000);
    const e = await setup({ systemPrompt: prompt });
    const view = await e.say("hi");
    const failure = view.turns.at(-1)?.failure;
    assert.equal(failure?.code, "context_fixed_overhead");
    assert.doesNotMatch(failure!.message, /SECRETPROMPT/);
    assert.match(failure!.message, /\d/);
    assert.equal(e.gateway.requests.length, 0);
    await e.host.shutdown();
  });

  test("output budget: explicit sent unchanged, capped by the model's limit, else omitted", async () => {
    const explicit = await setup({ maxOutputTokens: 500 });
    await explicit.say("hi");
    assert.equal(explicit.gateway.requests[0].maxOutputTokens, 500);
    await explicit.host.shutdown();

    const capped = await setup({ modelMaxOutputTokens: 1000 });
    await capped.say("hi");
    assert.equal(capped.gateway.requests[0].maxOutputTokens, 1000);
    await capped.say(words(6900));
    const room = capped.gateway.requests[1].maxOutputTokens!;
    assert.ok(room > 0 && room < 1000, `budget ${room}`);
    await capped.host.shutdown();

    const none = await setup();
    await none.say("hi");
    assert.equal(none.gateway.requests[0].maxOutputTokens, undefined);
    await none.host.shutdown();
  });

  test("defineAgent refuses context numbers that are not positive integers", () => {
    const gateway = contextGateway(SYSTEM);
    for (const value of [0, -1, 1.5, Number.NaN]) {
      assert.throws(
        () =>
          defineAgent({ id: "a", systemPrompt: SYSTEM, gateway, context: { windowTokens: value } }),
        { code: "invalid_input" },
      );
    }
  });
});

describe("manual compaction", () => {
  test("below the target it is an explicit no-op: no request, no turn, one record per key", async () => {
    const e = await setup();
    const empty = await e.threads.compact({ threadId: e.threadId, requestKey: "c0" });
    assert.equal(empty.outcome, "noop", "a thread without turns");
    await e.say("hello");
    const turns = (await e.threads.view(e.threadId)).turns.length;
    const first = await e.threads.compact({ threadId: e.threadId, requestKey: "c1" });
    assert.equal(first.outcome, "noop");
    assert.equal(first.view.turns.length, turns);
    const again = await e.threads.compact({ threadId: e.threadId, requestKey: "c1" });
    assert.equal(again.outcome, "noop");
    assert.equal(e.gateway.summaries.length, 0);
    const figures = await e.threads.context(e.threadId);
    assert.deepEqual(figures.compactions.map((c) => c.status), ["noop", "noop"]);
    await assert.rejects(
      e.threads.cancel({ threadId: e.threadId, requestKey: "c1" }),
      { code: "request_conflict" },
    );
    await e.host.shutdown();
  });

  test("above the target it compacts now; later requests read the summary", async () => {
    const e = await setup();
    e.gateway.answers.push({ text: words(4500, "long") }, { text: words(2200, "more") });
    await e.say("first question");
    await e.say("write a lot");
    assert.equal(e.gateway.summaries.length, 0);
    const result = await e.threads.compact({ threadId: e.threadId, requestKey: "c" });
    assert.equal(result.outcome, "compacted");
    assert.equal(result.view.status, "idle");
    const replay = await e.threads.compact({ threadId: e.threadId, requestKey: "c" });
    assert.equal(replay.outcome, "compacted");
    const figures = await e.threads.context(e.threadId);
    assert.deepEqual(figures.compactions.map((c) => c.status), ["compacted"]);
    assert.ok(figures.estimateTokens < figures.compactions[0].tokensBefore!);
    assert.equal(figures.estimateTokens, result.view.context?.estimateTokens);
    await assert.rejects(e.threads.retry({ threadId: e.threadId, requestKey: "r" }), {
      code: "no_retry_target",
    });
    await e.say("go on");
    assert.match(textOf(e.gateway.requests.at(-1)!), /SUMMARY-1/);
    assert.doesNotMatch(textOf(e.gateway.requests.at(-1)!), /long0/, "the head is summarised");
    await e.host.shutdown();
  });
});

describe("accounting, durability and forks", () => {
  test("context(): window, confirmed usage and disjoint totals including summary requests", async () => {
    const e = await setup();
    e.gateway.answers.push({ text: "a", usage: { inputTokens: 100, outputTokens: 7 } });
    e.gateway.answers.push({ text: "b", usage: { inputTokens: 120, outputTokens: 9 } });
    await e.say("one");
    const view = await e.say("two");
    const figures = await e.threads.context(e.threadId);
    assert.equal(figures.windowTokens, 8000);
    assert.deepEqual(figures.confirmed, { inputTokens: 120, outputTokens: 9 });
    assert.deepEqual(figures.totals, {
      inputTokens: 220,
      outputTokens: 16,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
    });
    assert.equal(view.context?.windowTokens, 8000);
    assert.equal(view.context?.estimateTokens, figures.estimateTokens);
    assert.ok(figures.estimateTokens > 0);
    await e.host.shutdown();
  });

  test("the checkpoint survives a restart and a fork made after it reads the summary", async () => {
    const store = memoryStore();
    const keepOpen = { ...store, close: () => Promise.resolve() };
    const e = await setup({ store: keepOpen });
    await e.say("HEAD-MARKER first");
    e.gateway.answers.push({ text: "a", usage: { inputTokens: 7300 } });
    await e.say("second");
    await e.say("third");
    assert.equal(e.gateway.summaries.length, 1);
    const before = await e.threads.context(e.threadId);
    await e.host.shutdown();

    const r = await setup({ store: keepOpen });
    const after = await r.threads.context(e.threadId);
    assert.deepEqual(after.compactions, before.compactions);
    assert.equal(after.estimateTokens, before.estimateTokens);
    await r.threads.send({
      threadId: e.threadId,
      requestKey: "after-restart",
      input: { text: "fourth" },
    });
    await r.threads.waitForIdle(e.threadId, { timeoutMs: 10_000 });
    const resumed = textOf(r.gateway.requests[0]);
    assert.match(resumed, /SUMMARY-1/);
    assert.doesNotMatch(resumed, /HEAD-MARKER/);

    const fork = await r.threads.fork({ threadId: e.threadId, requestKey: "fork" });
    await r.threads.send({
      threadId: fork.threadId,
      requestKey: "in-fork",
      input: { text: "fifth" },
    });
    await r.threads.waitForIdle(fork.threadId, { timeoutMs: 10_000 });
    const forked = textOf(r.gateway.requests[1]);
    assert.match(forked, /SUMMARY-1/);
    assert.doesNotMatch(forked, /HEAD-MARKER/);
    assert.deepEqual((await r.threads.context(fork.threadId)).compactions, before.compactions);
    const items = (await r.threads.view(fork.threadId)).items;
    assert.equal(items[0].text, "HEAD-MARKER first", "the view keeps everything");
    await r.host.shutdown();
  });

  test("a crash during the summary call installs nothing and leaves a failed record", async () => {
    const store = memoryStore();
    const keepOpen = { ...store, close: () => Promise.resolve() };
    const e = await setup({ store: keepOpen });
    await e.say("first");
    e.gateway.answers.push({ text: "a", usage: { inputTokens: 7300 } });
    await e.say("second");
    e.gateway.summaryAnswers.push({ hang: true });
    await e.threads.send({ threadId: e.threadId, requestKey: "third", input: { text: "third" } });
    while (e.gateway.summaries.length === 0) await new Promise((r) => setTimeout(r, 5));
    const { estimateTokens } = await e.threads.context(e.threadId);
    await e.host.shutdown();
    const r = await setup({ store: keepOpen });
    const figures = await r.threads.context(e.threadId);
    assert.equal(figures.compactions.length, 1, "the stopped operation leaves one record");
    const [stopped] = figures.compactions;
    assert.equal(stopped.status, "failed");
    assert.equal(stopped.trigger, "threshold");
    assert.match(stopped.reason ?? "", /interrupted/);
    assert.equal(stopped.tokensAfter, undefined);
    assert.equal(figures.estimateTokens, estimateTokens, "nothing was installed");
    const view = await r.threads.view(e.threadId);
    assert.equal(view.turns.at(-1)?.outcome, "interrupted");
    await r.threads.retry({ threadId: e.threadId, requestKey: "retry" });
    const done = await r.threads.waitForIdle(e.threadId, { timeoutMs: 10_000 });
    assert.equal(done.turns.at(-1)?.outcome, "completed", "retry after a compaction works");
    assert.deepEqual(
      (await r.threads.context(e.threadId)).compactions.map((c) => c.status),
      ["failed", "compacted"],
    );
    await r.host.shutdown();
  });

  test("observation events report compactions with figures and no summary text", async () => {
    const events: ObservationEvent[] = [];
    const e = await setup({ events });
    await e.say("first");
    e.gateway.answers.push({ text: "a", usage: { inputTokens: 7300 } });
    await e.say("second");
    await e.say("third");
    const compactions = events.filter((event) => event.type === "compaction");
    assert.equal(compactions.length, 1);
    assert.equal(compactions[0].status, "compacted");
    assert.equal(typeof compactions[0].tokensBefore, "number");
    assert.doesNotMatch(JSON.stringify(events), /SUMMARY-1/);
    await e.host.shutdown();
  });
});

describe("scripted gateway", () => {
  test("error kind and tool-call usage drive overflow and threshold compaction", async () => {
    const { scriptedGateway } = await import("@floret/engine/testing");
    const { addTool } = await import("./support/engine.ts");
    const gateway = scriptedGateway([
      { text: `first ${words(300)}` },
      // The tool step reports usage over T: the next step compacts first.
      {
        toolCalls: [{ name: "add", arguments: { a: 1, b: 2 } }],
        usage: { inputTokens: 7400, outputTokens: 20 },
      },
      { text: "SCRIPTED-SUMMARY-A" }, // the summary request
      { error: { retry: "retryable", kind: "context_overflow", message: "too long" } },
      { text: "SCRIPTED-SUMMARY-B" }, // overflow: compact once more, then resend
      { text: "three" },
    ], { capabilities: { contextWindowTokens: 8000 } });
    const host = await openHost({ store: memoryStore() });
    const threads = host.threads({
      agent: defineAgent({
        id: "s",
        systemPrompt: SYSTEM,
        gateway,
        tools: [addTool()],
        askUser: false, // sized without the built-in tools
        todos: false,
      }),
    });
    const { threadId } = await threads.create({ requestKey: "c" });
    await threads.send({ threadId, requestKey: "1", input: { text: `one ${words(300)}` } });
    await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
    await threads.send({ threadId, requestKey: "2", input: { text: `two ${words(300)}` } });
    const view = await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
    assert.equal(view.turns.at(-1)?.outcome, "completed");
    const statuses = (await threads.context(threadId)).compactions.map((c) => c.status);
    assert.deepEqual(statuses, ["compacted", "compacted"]);
    const last = gateway.requests.at(-1)!;
    assert.match(JSON.stringify(last.messages), /SCRIPTED-SUMMARY-B/);
    assert.equal(gateway.requests.length, 6);
    await host.shutdown();
  });
});

describe("edges", () => {
  test("compact on a running thread is thread_busy", async () => {
    const e = await setup();
    e.gateway.answers.push({ hang: true });
    await e.threads.send({ threadId: e.threadId, requestKey: "s", input: { text: "hi" } });
    await assert.rejects(
      e.threads.compact({ threadId: e.threadId, requestKey: "c" }),
      { code: "thread_busy" },
    );
    await e.threads.cancel({ threadId: e.threadId, requestKey: "x" });
    await e.host.shutdown();
  });

  test("supplemental context counts as fixed input", async () => {
    const e = await setup();
    const view = await e.say("hi", {
      supplementalContext: [{ title: "Huge file", text: words(9000) }],
    });
    assert.equal(view.turns.at(-1)?.failure?.code, "context_fixed_overhead");
    assert.equal(e.gateway.requests.length, 0);
    const next = await e.say("small again");
    assert.equal(next.turns.at(-1)?.outcome, "completed", "a later turn does not carry it");
    await e.host.shutdown();
  });
});

describe("nothing to summarise", () => {
  test("a first turn over the threshold sends unchanged, writes no record and trips no breaker", async () => {
    const { scriptedGateway } = await import("@floret/engine/testing");
    const { addTool } = await import("./support/engine.ts");
    const gateway = scriptedGateway([
      { toolCalls: [{ name: "add", arguments: { a: 1, b: 2 } }] },
      { toolCalls: [{ name: "add", arguments: { a: 3, b: 4 } }] },
      { toolCalls: [{ name: "add", arguments: { a: 5, b: 6 } }] },
      { text: "done" },
    ], { capabilities: { contextWindowTokens: 8000 } });
    const host = await openHost({ store: memoryStore() });
    const threads = host.threads({
      agent: defineAgent({ id: "n", systemPrompt: SYSTEM, gateway, tools: [addTool()] }),
    });
    const { threadId } = await threads.create({ requestKey: "c" });
    await threads.send({ threadId, requestKey: "1", input: { text: words(6800) } }); // 6800: the third wave's richer ask_user schema costs ~100 tokens
    const view = await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
    assert.equal(view.turns.at(-1)?.outcome, "completed");
    assert.equal(gateway.requests.length, 4, "no summary request was made");
    const figures = await threads.context(threadId);
    assert.deepEqual(figures.compactions, []);
    assert.ok(figures.estimateTokens >= 7200, `over the threshold: ${figures.estimateTokens}`);
    await host.shutdown();
  });
});
