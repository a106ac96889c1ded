/**
 * `consoleObserver()`: one line per observation through the public API —
 * retries, waits, tool results and failures are visible; prompt text, tool
 * arguments and outputs, answers (secret or not) and key-shaped strings never
 * appear; `types` filters.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import {
  consoleObserver,
  defineAgent,
  defineTool,
  memoryStore,
  openHost,
  type ThreadService,
} from "@floret/engine";
import { scriptedGateway, type ScriptStep } from "@floret/engine/testing";

const PROMPT = "PROMPT-MARKER-tell-me-about-kiwis";
const ARGUMENT = "ARGUMENT-MARKER-kiwi";
const OUTPUT = "OUTPUT-MARKER-fruit-facts";
const ANSWER = "ANSWER-MARKER-hunter2";
const KEY = "sk-proj-AbCdEf0123456789XyZ";

async function run(steps: ScriptStep[], types?: string[]) {
  const lines: string[] = [];
  const host = await openHost({
    store: memoryStore(),
    onEvent: consoleObserver({ write: (line) => lines.push(line), ...(types ? { types } : {}) }),
  });
  const lookup = defineTool({
    name: "lookup",
    description: "Look a fruit up",
    input: z.object({ fruit: z.string() }),
    execute: () => OUTPUT,
  });
  const threads: ThreadService = host.threads({
    agent: defineAgent({
      id: "observed",
      systemPrompt: "SYSTEM-MARKER",
      gateway: scriptedGateway(steps),
      tools: [lookup],
      providerRetry: { delaysMs: [1, 1] },
    }),
  });
  const { threadId } = await threads.create({ requestKey: "c" });
  await threads.send({ threadId, requestKey: "s", input: { text: PROMPT } });
  let view = await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
  const pending = view.pending[0];
  if (pending?.kind === "input") {
    await threads.respond({
      threadId,
      requestKey: "answer",
      interactionId: pending.id,
      answers: pending.questions.map((q) => ({ questionId: q.id, value: ANSWER })),
    });
    view = await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
  }
  await host.shutdown();
  return { lines, view };
}

function assertClean(lines: string[]): void {
  for (const line of lines) {
    assert.equal(line.includes("\n"), false, `one line: ${line}`);
    for (const secret of [PROMPT, ARGUMENT, OUTPUT, ANSWER, KEY, "SYSTEM-MARKER", "AbCdEf0123"]) {
      assert.equal(line.includes(secret), false, `${secret} leaked in: ${line}`);
    }
  }
}

test("consoleObserver prints retries, tools, waits and the turn's end, and nothing private", async () => {
  const { lines } = await run([
    {
      error: {
        status: 503,
        retry: "retryable",
        message: `Service Unavailable (Authorization: Bearer ${KEY}) ${KEY}`,
      },
    },
    { toolCalls: [{ name: "lookup", arguments: { fruit: ARGUMENT } }] },
    {
      toolCalls: [{
        name: "ask_user",
        arguments: { questions: [{ id: "pw", prompt: PROMPT, secret: true }] },
      }],
    },
    { text: `Kiwis: ${OUTPUT}`, usage: { inputTokens: 12, outputTokens: 5 } },
  ]);
  const text = lines.join("\n");
  assert.match(text, /^\[floret\] \d\d:\d\d:\d\d\.\d{3} turn\.started thread=\S+ turn=\S+$/m);
  assert.match(
    text,
    /provider\.retry thread=\S+ turn=\S+ step=0 attempt=1 status=503 kind=server wait=1ms: Service Unavailable/,
  );
  assert.match(text, /tool\.dispatched .*tool=lookup call=\S+ effect=none/);
  assert.match(text, /tool\.result .*tool=lookup call=\S+ status=completed \d+ms/);
  assert.match(text, /interaction\.opened .*kind=input tool=ask_user/);
  assert.match(text, /turn\.waiting thread=\S+ turn=\S+/);
  assert.match(text, /interaction\.resolved .*kind=input answers=1/);
  assert.match(text, /usage .*in=12 out=5/);
  assert.match(text, /turn\.ended thread=\S+ turn=\S+ outcome=completed$/m);
  assertClean(lines);
});

test("a failed turn says its failure code; types keeps only the chosen types and families", async () => {
  const { lines, view } = await run(
    [{ error: { status: 401, retry: "never", message: `Incorrect API key provided: ${KEY}` } }],
    ["turn.ended", "provider."],
  );
  assert.equal(view.turns.at(-1)?.outcome, "failed");
  const code = view.turns.at(-1)?.failure?.code;
  assert.ok(code);
  assert.ok(lines.length >= 2, lines.join("\n"));
  assert.ok(
    lines.every((line) => /\] \S+ (turn\.ended|provider\.\S+) /.test(line)),
    lines.join("\n"),
  );
  assert.match(lines.at(-1)!, new RegExp(`turn\\.ended .*outcome=failed failure=${code}$`));
  assertClean(lines);
});

test("the default write is console.error: one line per event", () => {
  const original = console.error;
  const seen: unknown[][] = [];
  console.error = (...args: unknown[]) => void seen.push(args);
  try {
    consoleObserver()({
      type: "turn.started",
      threadId: "t1",
      turnId: "u1",
      at: "2026-01-02T03:04:05.678Z",
    });
  } finally {
    console.error = original;
  }
  assert.deepEqual(seen, [["[floret] 03:04:05.678 turn.started thread=t1 turn=u1"]]);
});
