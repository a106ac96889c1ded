/**
 * Issue 29, output caps and request bytes: summary and title requests ask
 * for at most `modelMaxOutputTokens`; a request over `maxRequestBytes` fails
 * the turn `request_too_large` before it is sent, with numbers and without
 * the prompt's text.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { defineAgent, memoryStore, openHost } from "@floret/engine";
import { scriptedGateway } from "@floret/engine/testing";
import { fullThread } from "./support/context_host.ts";
import { titleGateway } from "./support/title_gateway.ts";

test("a summary request asks for at most modelMaxOutputTokens", async () => {
  const e = await fullThread({ modelMaxOutputTokens: 300 });
  await e.threads.compact({ threadId: e.threadId, requestKey: "compact" });
  await e.threads.waitForIdle(e.threadId, { timeoutMs: 20_000 });
  assert.ok(e.gateway.summaries.length > 0, "a summary was requested");
  for (const summary of e.gateway.summaries) {
    assert.ok(summary.maxOutputTokens! <= 300, `asked for ${summary.maxOutputTokens}`);
  }
  await e.host.shutdown();
});

test("a title request asks for at most modelMaxOutputTokens", async () => {
  const gateway = titleGateway([{ text: "hello" }], { text: "A title" });
  const host = await openHost({ store: memoryStore() });
  const threads = host.threads({
    agent: defineAgent({
      id: "t",
      systemPrompt: "s",
      gateway,
      titles: "provider",
      context: { modelMaxOutputTokens: 16 },
    }),
  });
  const { threadId } = await threads.create({ requestKey: "c" });
  await threads.send({ threadId, requestKey: "s", input: { text: "first message" } });
  await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
  await gateway.titleStarted;
  assert.equal(gateway.titleRequests[0].maxOutputTokens, 16);
  await host.shutdown();
});

test("a request over maxRequestBytes fails the turn request_too_large before dispatch", async () => {
  const gateway = scriptedGateway([{ text: "never sent" }]);
  const host = await openHost({ store: memoryStore() });
  const threads = host.threads({
    agent: defineAgent({ id: "a", systemPrompt: "s", gateway, maxRequestBytes: 2_000 }),
  });
  const { threadId } = await threads.create({ requestKey: "c" });
  const secret = "PROMPT-TEXT-".repeat(300);
  await threads.send({ threadId, requestKey: "s", input: { text: secret } });
  const view = await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
  const turn = view.turns.at(-1)!;
  assert.equal(turn.outcome, "failed");
  assert.equal(turn.failure?.code, "request_too_large");
  assert.match(turn.failure!.message, /\d+ bytes.*2000/);
  assert.doesNotMatch(turn.failure!.message, /PROMPT-TEXT/);
  assert.equal(gateway.requests.length, 0, "nothing was dispatched");
  await host.shutdown();
});

test("a request under maxRequestBytes is sent", async () => {
  const gateway = scriptedGateway([{ text: "ok" }]);
  const host = await openHost({ store: memoryStore() });
  const threads = host.threads({
    agent: defineAgent({ id: "a", systemPrompt: "s", gateway, maxRequestBytes: 1_000_000 }),
  });
  const { threadId } = await threads.create({ requestKey: "c" });
  await threads.send({ threadId, requestKey: "s", input: { text: "hi" } });
  const view = await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
  assert.equal(view.turns.at(-1)!.outcome, "completed");
  await host.shutdown();
});
