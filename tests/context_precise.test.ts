/**
 * The context precise points (DESIGN §10) that the broader compaction tests
 * leave open: manual compactions that fail, the circuit breaker's reset and
 * its durability, forks cut before a compaction, the threshold under an
 * explicit output budget, overflow with nothing to summarise, the retained
 * tail's size, and what an automatic compaction leaves in the view.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { memoryStore, ProviderError } from "@floret/engine";
import { textOf, words } from "./support/context_gateway.ts";
import { fullThread, setup } from "./support/context_host.ts";

const failing = () => ({
  error: new ProviderError("down", { retry: "never", kind: "server" as const }),
});

describe("manual compaction that installs nothing", () => {
  test("a failed summary answers noop with its failed record; replays agree; a new key tries again", async () => {
    const e = await fullThread();
    const estimate = (await e.threads.context(e.threadId)).estimateTokens;
    e.gateway.summaryAnswers.push(failing());
    const result = await e.threads.compact({ threadId: e.threadId, requestKey: "m1" });
    assert.equal(result.outcome, "noop", "nothing was installed");
    assert.equal(result.compaction?.status, "failed");
    assert.equal(result.compaction?.trigger, "manual");
    assert.match(result.compaction?.reason ?? "", /summary request failed/);
    assert.equal(result.view.status, "idle");
    const turn = result.view.turns.at(-1)!;
    assert.equal(turn.outcome, "failed");
    assert.equal(turn.failure?.code, "provider_error");
    assert.equal(e.gateway.summaries.length, 1);
    const figures = await e.threads.context(e.threadId);
    assert.deepEqual(figures.compactions.map((c) => c.status), ["failed"]);
    assert.equal(figures.estimateTokens, estimate, "the context is unchanged");

    const replay = await e.threads.compact({ threadId: e.threadId, requestKey: "m1" });
    assert.equal(replay.outcome, "noop");
    assert.deepEqual(replay.compaction, result.compaction);
    assert.equal(e.gateway.summaries.length, 1, "a replay runs nothing");
    assert.equal((await e.threads.context(e.threadId)).compactions.length, 1);

    const again = await e.threads.compact({ threadId: e.threadId, requestKey: "m2" });
    assert.equal(again.outcome, "compacted");
    assert.equal(again.compaction?.status, "compacted");
    assert.ok(again.compaction!.tokensAfter! < again.compaction!.tokensBefore!);
    const after = await e.threads.context(e.threadId);
    assert.deepEqual(after.compactions.map((c) => c.status), ["failed", "compacted"]);
    await e.say("go on");
    const last = textOf(e.gateway.requests.at(-1)!);
    assert.match(last, /SUMMARY-2/);
    assert.doesNotMatch(last, /long0/, "the long answer was summarised");
    await e.host.shutdown();
  });

  test("a replay still answers compacted after a later no-op on the same thread", async () => {
    const e = await fullThread();
    const first = await e.threads.compact({ threadId: e.threadId, requestKey: "k1" });
    assert.equal(first.outcome, "compacted");
    const second = await e.threads.compact({ threadId: e.threadId, requestKey: "k2" });
    assert.equal(second.outcome, "noop", "now below the target");
    const replay = await e.threads.compact({ threadId: e.threadId, requestKey: "k1" });
    assert.equal(replay.outcome, "compacted");
    assert.deepEqual(replay.compaction, first.compaction);
    await e.host.shutdown();
  });

  test("a below-target noop carries its record too, on the first call and on a replay", async () => {
    const e = await setup();
    await e.say("hello");
    const first = await e.threads.compact({ threadId: e.threadId, requestKey: "n" });
    assert.equal(first.outcome, "noop");
    assert.equal(first.compaction?.status, "noop");
    assert.match(first.compaction?.reason ?? "", /below the target/);
    const replay = await e.threads.compact({ threadId: e.threadId, requestKey: "n" });
    assert.deepEqual(replay.compaction, first.compaction);
    assert.equal((await e.threads.context(e.threadId)).compactions.length, 1);
    await e.host.shutdown();
  });
});

describe("circuit breaker", () => {
  /** Two automatic compactions fail in a row; the unchanged requests still fit and are sent. */
  async function tripped(store = memoryStore()) {
    const keepOpen = { ...store, close: () => Promise.resolve() };
    const e = await fullThread({ store: keepOpen });
    e.gateway.summaryAnswers.push(failing(), failing());
    for (const text of ["q3", "q4"]) {
      const view = await e.say(text);
      assert.equal(view.turns.at(-1)?.outcome, "completed", text);
    }
    assert.equal(e.gateway.summaries.length, 2);
    const view = await e.say("q5");
    assert.equal(view.turns.at(-1)?.outcome, "completed");
    assert.equal(e.gateway.summaries.length, 2, "the breaker stops a third summary request");
    return { e, store: keepOpen };
  }

  test("a manual compaction that succeeds closes it again", async () => {
    const { e } = await tripped();
    const manual = await e.threads.compact({ threadId: e.threadId, requestKey: "m" });
    assert.equal(manual.outcome, "compacted");
    // Fill the window again: the next automatic compaction is attempted.
    const before = e.gateway.summaries.length;
    e.gateway.answers.push({ text: words(3000, "again") }, { text: words(1950, "still") });
    for (const text of ["q6", "q7", "q8"]) {
      const view = await e.say(text);
      assert.equal(view.turns.at(-1)?.outcome, "completed", text);
    }
    assert.ok(e.gateway.summaries.length > before, "an automatic summary was requested");
    const records = (await e.threads.context(e.threadId)).compactions;
    assert.deepEqual(records.slice(0, 3).map((c) => [c.status, c.trigger]), [
      ["failed", "threshold"],
      ["failed", "threshold"],
      ["compacted", "manual"],
    ]);
    assert.deepEqual(records.slice(3).map((c) => [c.status, c.trigger]), [
      ["compacted", "threshold"],
    ]);
    await e.host.shutdown();
  });

  test("its count comes from the durable records: it stays open after a restart", async () => {
    const { e, store } = await tripped();
    await e.host.shutdown();
    const r = await setup({ store });
    await r.threads.send({ threadId: e.threadId, requestKey: "after", input: { text: "q6" } });
    const view = await r.threads.waitForIdle(e.threadId, { timeoutMs: 20_000 });
    assert.equal(view.turns.at(-1)?.outcome, "completed");
    assert.equal(r.gateway.summaries.length, 0, "no summary request after the restart either");
    assert.equal(r.gateway.requests.length, 1);
    await r.host.shutdown();
  });
});

describe("cut, tail and view", () => {
  test("an automatic compaction adds no turn and no item; the summary request carries the head", async () => {
    const e = await setup();
    await e.say("HEAD-MARKER first");
    e.gateway.answers.push({ text: "a", usage: { inputTokens: 7300 } });
    await e.say("second");
    const view = await e.say("third");
    assert.equal(e.gateway.summaries.length, 1);
    assert.equal(view.turns.length, 3);
    assert.deepEqual(view.items.map((item) => item.kind), [
      "user",
      "assistant",
      "user",
      "assistant",
      "user",
      "assistant",
    ]);
    const summary = e.gateway.summaries[0];
    assert.match(textOf(summary), /HEAD-MARKER first/, "the head's content is summarised");
    assert.doesNotMatch(textOf(summary), /third/, "the current input is not");
    const request = e.gateway.requests.at(-1)!;
    assert.equal(
      request.messages.filter((m) => /SUMMARY-1/.test(textOf({ ...request, messages: [m] })))
        .length,
      1,
    );
    assert.equal(request.messages.at(-1)?.role, "user");
    assert.equal((request.messages.at(-1) as { text: string }).text, "third");
    await e.host.shutdown();
  });

  test("the retained tail keeps at least min(12,000, W/4) tokens of recent messages verbatim", async () => {
    const e = await setup();
    const inputs: string[] = [];
    for (let i = 0; i < 24; i++) {
      inputs.push(`turn ${i}: ${words(300, `t${i}x`)}`);
      const view = await e.say(inputs[i]);
      assert.equal(view.turns.at(-1)?.outcome, "completed");
    }
    assert.ok(e.gateway.summaries.length >= 1);
    // The first request after the latest compaction: its tail is exactly what the cut kept.
    const index = e.gateway.requests.findLastIndex((r) => /SUMMARY-/.test(textOf(r)));
    const first = e.gateway.requests.findIndex((r) =>
      new RegExp(`SUMMARY-${e.gateway.summaries.length}\\b`).test(textOf(r))
    );
    assert.ok(first >= 0 && index >= first);
    const request = e.gateway.requests[first];
    const current = inputs.indexOf((request.messages.at(-1) as { text: string }).text);
    assert.ok(current >= 4, `current input ${current}`);
    // W/4 = 2,000 tokens; four earlier inputs of ~300 words each, with their answers, are
    // well within it even for an estimator 1.7× more generous than this one.
    const texts = request.messages.map((m) => ("text" in m ? m.text : ""));
    for (let k = current - 4; k < current; k++) {
      assert.ok(texts.includes(inputs[k]), `input ${k} is verbatim in the tail`);
    }
    await e.host.shutdown();
  });

  test("a fork cut before a compaction reads the full history, not the summary", async () => {
    const e = await setup();
    await e.say("HEAD-MARKER first");
    e.gateway.answers.push({ text: "a", usage: { inputTokens: 7300 } });
    await e.say("second");
    const view = await e.say("third");
    assert.equal(e.gateway.summaries.length, 1);
    const fork = await e.threads.fork({
      threadId: e.threadId,
      requestKey: "fork-early",
      atItemId: view.items[1].id, // the first answer, before the compaction
    });
    assert.deepEqual((await e.threads.context(fork.threadId)).compactions, []);
    await e.threads.send({ threadId: fork.threadId, requestKey: "f", input: { text: "other" } });
    await e.threads.waitForIdle(fork.threadId, { timeoutMs: 20_000 });
    const forked = textOf(e.gateway.requests.at(-1)!);
    assert.match(forked, /HEAD-MARKER first/);
    assert.doesNotMatch(forked, /SUMMARY-/);
    assert.doesNotMatch(forked, /second|third/);
    await e.host.shutdown();
  });
});

describe("supplemental context and request keys", () => {
  test("a turn that compacts keeps its supplemental context after the input, out of the summary", async () => {
    const e = await setup();
    await e.say("HEAD-MARKER first");
    e.gateway.answers.push({ text: "a", usage: { inputTokens: 7300 } });
    await e.say("second");
    const view = await e.say("third", {
      supplementalContext: [{ title: "Open file", text: "SUPPLEMENTAL-MARKER contents" }],
    });
    assert.equal(view.turns.at(-1)?.outcome, "completed");
    assert.equal(e.gateway.summaries.length, 1);
    assert.doesNotMatch(textOf(e.gateway.summaries[0]), /SUPPLEMENTAL-MARKER/);
    const request = e.gateway.requests.at(-1)!;
    const texts = request.messages.map((m) => ("text" in m ? m.text : ""));
    const input = texts.indexOf("third");
    assert.ok(input > 0);
    assert.match(texts[input + 1], /SUPPLEMENTAL-MARKER/, "right after the current input");
    assert.match(texts[1], /SUMMARY-1/);
    await e.host.shutdown();
  });

  test("compact reusing another command's key is request_conflict", async () => {
    const e = await setup();
    await e.say("hello"); // claims send-1
    await assert.rejects(
      e.threads.compact({ threadId: e.threadId, requestKey: "send-1" }),
      { code: "request_conflict" },
    );
    assert.deepEqual((await e.threads.context(e.threadId)).compactions, []);
    await e.host.shutdown();
  });
});

describe("thresholds and limits", () => {
  test("an explicit maxOutputTokens M lowers the threshold to W − M", async () => {
    const sizes = [words(2000, "a"), words(2000, "b"), words(1900, "c")];
    const plain = await setup();
    for (const text of sizes) await plain.say(text);
    assert.equal(plain.gateway.summaries.length, 0, "below 0.9·W without M");
    await plain.host.shutdown();

    const budgeted = await setup({ maxOutputTokens: 3000 });
    for (const text of sizes) await budgeted.say(text);
    assert.equal(budgeted.gateway.summaries.length, 1, "at or over W − M = 5,000 with M");
    for (const request of budgeted.gateway.requests) assert.equal(request.maxOutputTokens, 3000);
    await budgeted.host.shutdown();
  });

  test("an overflow with nothing to summarise fails the turn with context_compaction_limit", async () => {
    const e = await setup();
    e.gateway.answers.push({
      error: new ProviderError("too long", { retry: "never", kind: "context_overflow" }),
    });
    const view = await e.say("the very first message");
    assert.equal(view.turns.at(-1)?.failure?.code, "context_compaction_limit");
    assert.equal(e.gateway.summaries.length, 0);
    assert.equal(e.gateway.requests.length, 1, "the overflowed request is not resent unchanged");
    await e.host.shutdown();
  });

  test("a current input that alone reaches the hard limit fails with context_fixed_overhead", async () => {
    const e = await setup();
    const view = await e.say(`INPUT-MARKER ${words(9000)}`);
    const failure = view.turns.at(-1)?.failure;
    assert.equal(failure?.code, "context_fixed_overhead");
    assert.doesNotMatch(failure!.message, /INPUT-MARKER/);
    assert.match(view.items[0].text ?? "", /^INPUT-MARKER/, "the user item stays");
    assert.equal(e.gateway.requests.length + e.gateway.summaries.length, 0);
    await e.host.shutdown();
  });
});
