/**
 * Context precise points (DESIGN §10) that the other context tests leave
 * open, each through the public API: the hard limit under an explicit output
 * budget, the 50,000-token cap of the manual target, tool definitions as
 * fixed input, the order of the budget checks, the summary request's retry
 * policy and trimming, earlier user inputs kept verbatim, an overflow whose
 * compaction fails, and history after a compaction.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import {
  defineAgent,
  defineTool,
  memoryStore,
  type ObservationEvent,
  openHost,
  ProviderError,
} from "@floret/engine";
import { contextGateway, textOf, words } from "./support/context_gateway.ts";
import { CONTEXT_SYSTEM, fullThread, setup } from "./support/context_host.ts";

describe("numbers for window W", () => {
  test("with an explicit maxOutputTokens M the hard limit is W − M", async () => {
    const input = `INPUT ${words(3500, "long")}`; // about 5,250 tokens: over 8,000 − 3,000
    const plain = await setup();
    const fits = await plain.say(input);
    assert.equal(fits.turns.at(-1)?.outcome, "completed", "under W − min(W/100, 4096)");
    await plain.host.shutdown();

    const budgeted = await setup({ maxOutputTokens: 3000 });
    const view = await budgeted.say(input);
    assert.equal(view.turns.at(-1)?.failure?.code, "context_fixed_overhead");
    assert.match(view.turns.at(-1)!.failure!.message, /5000/, "the limit is W − M");
    assert.equal(budgeted.gateway.requests.length, 0);
    await budgeted.host.shutdown();
  });

  test("the manual target is min(50,000, T): a large window compacts from 50,000 tokens on", async () => {
    // W = 200,000: T = 180,000, so only the 50,000 cap separates these two estimates.
    const e = await setup({ windowTokens: 200_000 });
    e.gateway.answers.push({ text: words(27_000, "long") }); // about 40,500 tokens
    await e.say("first question");
    await e.say("second question");
    const below = await e.threads.compact({ threadId: e.threadId, requestKey: "below" });
    assert.equal(below.outcome, "noop");
    assert.match(below.compaction?.reason ?? "", /below the target: \d+ of 50000 tokens/);
    assert.equal(e.gateway.summaries.length, 0, "a below-target no-op makes no request");

    e.gateway.answers.push({ text: words(8_000, "more") }); // about 12,000 more
    await e.say("third question");
    const { estimateTokens } = await e.threads.context(e.threadId);
    assert.ok(estimateTokens >= 50_000 && estimateTokens < 180_000, `estimate ${estimateTokens}`);
    const above = await e.threads.compact({ threadId: e.threadId, requestKey: "above" });
    assert.equal(above.outcome, "compacted");
    assert.equal(e.gateway.summaries.length, 1);
    await e.host.shutdown();
  });
});

describe("which tokens count", () => {
  test("tool definitions are fixed input: alone over the hard limit, the turn fails first", async () => {
    const gateway = contextGateway(CONTEXT_SYSTEM);
    const host = await openHost({ store: memoryStore() });
    // Four tools of about 2,250 tokens of description each (a description holds 10,000
    // characters at most).
    const tools = ["a", "b", "c", "d"].map((name) =>
      defineTool({
        name,
        description: `TOOL-MARKER ${words(1500, "long")}`,
        input: z.object({}),
        execute: () => "never",
      })
    );
    const threads = host.threads({
      agent: defineAgent({
        id: "tools",
        systemPrompt: CONTEXT_SYSTEM,
        gateway,
        tools,
        context: { windowTokens: 8000 },
      }),
    });
    const { threadId } = await threads.create({ requestKey: "c" });
    await threads.send({ threadId, requestKey: "s", input: { text: "hi" } });
    const view = await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
    const failure = view.turns.at(-1)?.failure;
    assert.equal(failure?.code, "context_fixed_overhead");
    assert.doesNotMatch(failure!.message, /TOOL-MARKER/);
    assert.equal(gateway.requests.length + gateway.summaries.length, 0);
    assert.ok((await threads.context(threadId)).estimateTokens >= 9000, "the estimate counts them");
    await host.shutdown();
  });
});

describe("never-fitting budgets", () => {
  test("M ≥ W is checked first: it wins over a fixed input that also overflows", async () => {
    const e = await setup({ maxOutputTokens: 8000, systemPrompt: `PROMPT ${words(9000)}` });
    const view = await e.say("hi");
    assert.equal(view.turns.at(-1)?.failure?.code, "context_budget_invalid");
    assert.doesNotMatch(view.turns.at(-1)!.failure!.message, /PROMPT/);
    assert.equal(view.items[0].text, "hi", "the turn was admitted");
    await e.host.shutdown();
  });
});

describe("the summary request", () => {
  test("goes under the agent's retry policy: a retryable failure is retried, one record", async () => {
    const events: ObservationEvent[] = [];
    const e = await fullThread({ events });
    e.gateway.summaryAnswers.push({
      error: new ProviderError("busy", { retry: "retryable", kind: "server", status: 503 }),
    });
    const result = await e.threads.compact({ threadId: e.threadId, requestKey: "m" });
    assert.equal(result.outcome, "compacted");
    assert.equal(e.gateway.summaries.length, 2, "the failed attempt was retried");
    assert.deepEqual(
      (await e.threads.context(e.threadId)).compactions.map((c) => c.status),
      ["compacted"],
    );
    assert.equal(events.filter((event) => event.type === "compaction.retry").length, 1);
    await e.host.shutdown();
  });

  test("its trimmed text is the summary, verbatim in one message after the system prompt", async () => {
    const e = await fullThread();
    e.gateway.summaryAnswers.push({ text: "  \n SPACED-SUMMARY  kept  inside \n\n " });
    assert.equal(
      (await e.threads.compact({ threadId: e.threadId, requestKey: "m" })).outcome,
      "compacted",
    );
    await e.say("go on");
    const request = e.gateway.requests.at(-1)!;
    assert.equal((request.messages[0] as { text: string }).text, CONTEXT_SYSTEM);
    const checkpoint = (request.messages[1] as { text: string }).text;
    assert.match(checkpoint, /\nSPACED-SUMMARY {2}kept {2}inside\n/);
    assert.doesNotMatch(checkpoint, / SPACED-SUMMARY|inside \n/, "trimmed, not reflowed");
    await e.host.shutdown();
  });
});

describe("cut and install", () => {
  test("earlier user inputs stay verbatim with the summary, within min(15,000, W/4)", async () => {
    const e = await fullThread();
    assert.equal(
      (await e.threads.compact({ threadId: e.threadId, requestKey: "m" })).outcome,
      "compacted",
    );
    await e.say("go on");
    const checkpoint = (e.gateway.requests.at(-1)!.messages[1] as { text: string }).text;
    assert.match(checkpoint, /SUMMARY-1/);
    assert.ok(checkpoint.includes(JSON.stringify("HEAD-MARKER first question")));
    assert.doesNotMatch(checkpoint, /long0/, "the answer it summarised is gone");
    await e.host.shutdown();

    // An input larger than W/4 = 2,000 tokens is summarised, never kept verbatim.
    const big = await setup();
    big.gateway.answers.push({ text: words(2000, "long") }, { text: words(1400, "more") });
    await big.say(`BIG-INPUT ${words(1500, "long")}`); // about 2,250 tokens
    await big.say("write a lot");
    const result = await big.threads.compact({ threadId: big.threadId, requestKey: "m" });
    assert.equal(result.outcome, "compacted");
    assert.match(textOf(big.gateway.summaries[0]), /BIG-INPUT/, "the summary request has it");
    await big.say("go on");
    assert.doesNotMatch(textOf(big.gateway.requests.at(-1)!), /BIG-INPUT/);
    await big.host.shutdown();
  });

  test("history keeps every item after a compaction", async () => {
    const e = await fullThread();
    await e.threads.compact({ threadId: e.threadId, requestKey: "m" });
    const view = await e.say("go on");
    const history = await e.threads.history(e.threadId, { limit: 100 });
    assert.deepEqual(history.items.map((item) => item.id), view.items.map((item) => item.id));
    assert.equal(history.items[0].text, "HEAD-MARKER first question");
    await e.host.shutdown();
  });
});

describe("overflow", () => {
  test("when the compaction after an overflow fails, the turn fails with context_compaction_limit", async () => {
    const e = await setup();
    await e.say(`one ${words(400)}`);
    await e.say(`two ${words(400)}`);
    e.gateway.answers.push({
      error: new ProviderError("too long", { retry: "never", kind: "context_overflow" }),
    });
    e.gateway.summaryAnswers.push({
      error: new ProviderError("down", { retry: "never", kind: "server" }),
    });
    const sent = e.gateway.requests.length;
    const view = await e.say("three");
    assert.equal(view.turns.at(-1)?.failure?.code, "context_compaction_limit");
    assert.equal(e.gateway.requests.length, sent + 1, "the refused request is not resent");
    const { compactions } = await e.threads.context(e.threadId);
    assert.deepEqual(compactions.map((c) => [c.status, c.trigger]), [["failed", "overflow"]]);
    await e.host.shutdown();
  });
});
