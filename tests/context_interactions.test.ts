/**
 * Compaction meets interactions: tool batches with approvals and ask_user
 * answers are never split by a cut, secret answers never reach a summary
 * request, and a thread waiting for an interaction cannot be compacted.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import {
  defineAgent,
  defineTool,
  type KvStore,
  memoryStore,
  openHost,
  type ProviderRequest,
  type ThreadView,
} from "@floret/engine";
import { contextGateway, words } from "./support/context_gateway.ts";

const SYSTEM = "You are a careful assistant with tools.";
const FAST = { delaysMs: [1, 1, 1, 1] };
const WAIT = { timeoutMs: 20_000 };

async function setup(store: KvStore = memoryStore()) {
  const gateway = contextGateway(SYSTEM);
  const host = await openHost({ store });
  const ran: string[] = [];
  const write = defineTool({
    name: "write",
    description: "Write a line to the user's notebook",
    effect: "write",
    input: z.object({ line: z.string() }),
    permission: "ask",
    execute: ({ line }) => {
      ran.push(line);
      return `wrote ${line}`;
    },
  });
  const look = defineTool({
    name: "look",
    description: "Read a page of notes",
    input: z.object({ page: z.number() }),
    execute: ({ page }) => `page ${page}: ${words(150, `p${page}x`)}`,
  });
  const agent = defineAgent({
    id: "ctx-tools",
    systemPrompt: SYSTEM,
    gateway,
    tools: [write, look],
    // ask_user stays on (it is what these tests exercise); todo_write is not needed.
    todos: false,
    context: { windowTokens: 8000 },
    providerRetry: FAST,
  });
  const threads = host.threads({ agent });
  const { threadId } = await threads.create({ requestKey: "create" });
  let n = 0;
  const send = async (text: string): Promise<ThreadView> => {
    await threads.send({ threadId, requestKey: `send-${++n}`, input: { text } });
    return await threads.waitForIdle(threadId, WAIT);
  };
  const respond = async (
    view: ThreadView,
    resolution: {
      decision?: "approve" | "deny";
      answers?: { questionId: string; value: string }[];
    },
  ): Promise<ThreadView> => {
    assert.equal(view.status, "waiting");
    await threads.respond({
      threadId,
      requestKey: `respond-${++n}`,
      interactionId: view.pending[0].id,
      ...resolution,
    });
    return await threads.waitForIdle(threadId, WAIT);
  };
  return { gateway, host, threads, threadId, send, respond, ran, store };
}

/** Every tool result follows the call it answers, and every call has its result. */
function assertPaired(request: ProviderRequest, label: string): void {
  const open = new Set<string>();
  const answered = new Set<string>();
  for (const message of request.messages) {
    if (message.role === "assistant") {
      for (const call of message.toolCalls ?? []) open.add(call.callId);
    } else if (message.role === "tool") {
      assert.ok(open.has(message.callId), `${label}: result ${message.callId} without its call`);
      answered.add(message.callId);
    }
  }
  for (const callId of open) {
    assert.ok(answered.has(callId), `${label}: call ${callId} without its result`);
  }
}

describe("compaction with interactions", () => {
  test("tool batches with approvals and answers are never split, across many compactions", async () => {
    const e = await setup();
    for (let i = 0; i < 21; i++) {
      const text = `turn ${i}: ${words(600, `t${i}x`)}`;
      if (i % 3 === 0) {
        // An approval and a plain call in one batch, then the answer.
        e.gateway.answers.push(
          {
            toolCalls: [{ name: "write", arguments: { line: `l${i}` } }, {
              name: "look",
              arguments: { page: i },
            }],
          },
          { text: `done ${i}: ${words(200, `a${i}x`)}` },
        );
        const waiting = await e.send(text);
        const done = await e.respond(waiting, { decision: "approve" });
        assert.equal(done.turns.at(-1)?.outcome, "completed", `turn ${i}`);
      } else if (i % 3 === 1) {
        // A public question, answered, then a plain call, then the answer.
        e.gateway.answers.push(
          {
            toolCalls: [{
              name: "ask_user",
              arguments: { questions: [{ id: "q", prompt: `Which colour for ${i}?` }] },
            }],
          },
          { toolCalls: [{ name: "look", arguments: { page: i } }] },
          { text: `noted ${i}` },
        );
        const waiting = await e.send(text);
        const done = await e.respond(waiting, {
          answers: [{ questionId: "q", value: `colour-${i}` }],
        });
        assert.equal(done.turns.at(-1)?.outcome, "completed", `turn ${i}`);
      } else {
        e.gateway.answers.push({ text: `plain ${i}: ${words(300, `b${i}x`)}` });
        const done = await e.send(text);
        assert.equal(done.turns.at(-1)?.outcome, "completed", `turn ${i}`);
      }
    }
    const figures = await e.threads.context(e.threadId);
    const compacted = figures.compactions.filter((c) => c.status === "compacted");
    assert.ok(compacted.length >= 3, `compactions: ${JSON.stringify(figures.compactions)}`);
    assert.ok(e.gateway.requests.some((r) => /SUMMARY-/.test(JSON.stringify(r.messages))));
    e.gateway.requests.forEach((request, i) => assertPaired(request, `request ${i}`));
    // Every summary was written from whole batches too: a head that held a call holds its result.
    for (const [i, summary] of e.gateway.summaries.entries()) {
      const text = JSON.stringify(summary.messages);
      const calls = text.match(/\[tool call /g)?.length ?? 0;
      const results = text.match(/\[tool result /g)?.length ?? 0;
      assert.equal(calls, results, `summary ${i}: ${calls} calls, ${results} results`);
    }
    assert.deepEqual(
      e.ran,
      ["l0", "l3", "l6", "l9", "l12", "l15", "l18"],
      "each approved write ran once",
    );
    await e.host.shutdown();
  });

  test("a secret answer never reaches a summary request, even when the resumed run compacts", async () => {
    const SECRET = "hunter2-compaction-Zx81";
    const e = await setup();
    await e.send(`first ${words(600, "h")}`);
    await e.send(`second ${words(600, "i")}`);
    e.gateway.answers.push(
      {
        toolCalls: [{
          name: "ask_user",
          arguments: { questions: [{ id: "pw", prompt: "Password?", secret: true }] },
        }],
        // Confirmed usage over the threshold: the resumed run compacts before its request.
        usage: { inputTokens: 7400 },
      },
      { text: "logged in" },
    );
    const waiting = await e.send("log me in");
    const before = e.gateway.summaries.length;
    const done = await e.respond(waiting, { answers: [{ questionId: "pw", value: SECRET }] });
    assert.equal(done.turns.at(-1)?.outcome, "completed");
    assert.equal(e.gateway.summaries.length, before + 1, "the resumed run compacted");
    const resumed = JSON.stringify(e.gateway.requests.at(-1)!.messages);
    assert.ok(resumed.includes(SECRET), "the resumed run's own request carries the answer");
    assert.match(resumed, /SUMMARY-/);

    // Later turns push the (now redacted) answers message into a summarised head.
    for (let i = 0; i < 9; i++) await e.send(`later ${i} ${words(700, `l${i}x`)}`);
    const summaries = e.gateway.summaries.map((s) => JSON.stringify(s.messages));
    assert.ok(summaries.length > before + 1, "compacted again");
    assert.ok(
      summaries.some((s) => s.includes("[secret answer redacted]")),
      "the answer was summarised",
    );
    for (const [i, text] of summaries.entries()) {
      assert.ok(!text.includes(SECRET), `summary request ${i} carries the secret`);
    }
    for (const request of e.gateway.requests.slice(-6)) {
      assert.ok(!JSON.stringify(request.messages).includes(SECRET), "later runs never send it");
    }
    const rows = await e.store.list({ prefix: [] });
    const decoder = new TextDecoder();
    assert.ok(!rows.some((row) => decoder.decode(row.value).includes(SECRET)), "nor the store");
    await e.host.shutdown();
  });

  test("compact on a thread waiting for an interaction is thread_busy and records nothing", async () => {
    const e = await setup();
    await e.send("first question");
    e.gateway.answers.push(
      { toolCalls: [{ name: "write", arguments: { line: "x" } }] },
      { text: "written" },
    );
    const waiting = await e.send("write x");
    assert.equal(waiting.status, "waiting");
    await assert.rejects(
      e.threads.compact({ threadId: e.threadId, requestKey: "c-waiting" }),
      { code: "thread_busy" },
    );
    assert.deepEqual((await e.threads.context(e.threadId)).compactions, []);
    const still = await e.threads.view(e.threadId);
    assert.equal(still.status, "waiting");
    assert.equal(still.pending.length, 1);
    const done = await e.respond(waiting, { decision: "approve" });
    assert.equal(done.turns.at(-1)?.outcome, "completed");
    assert.deepEqual(e.ran, ["x"]);
    // Once the turn is over the same key is free: the busy answer claimed nothing.
    const result = await e.threads.compact({ threadId: e.threadId, requestKey: "c-waiting" });
    assert.equal(result.outcome, "noop");
    assert.equal(result.compaction?.status, "noop");
    assert.equal((await e.threads.context(e.threadId)).compactions.length, 1);
    await e.host.shutdown();
  });
});
