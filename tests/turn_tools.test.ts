/**
 * Issue 29, tool calls: a call to a tool the turn does not have is an
 * ordinary error result listing the tools it has (never an invalid-argument
 * episode, never a turn failure by itself, repetition still counts); the
 * repetition guard compares the raw argument text; an uncertain effect is
 * committed as the call's result (status `uncertain`) and the turn goes on,
 * and a retry keeps it.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import { defineTool, type ProviderMessage, type ThreadView } from "@floret/engine";
import { addTool, engine, lastTurn, sendAndWait } from "./support/engine.ts";

function toolMessages(messages: ProviderMessage[]) {
  return messages.filter((m): m is Extract<ProviderMessage, { role: "tool" }> => m.role === "tool");
}

function toolItems(view: ThreadView) {
  return view.items.filter((item) => item.kind === "tool").map((item) => item.tool!);
}

test("calls to an unknown tool are error results listing the tools; the turn goes on", async () => {
  const calls = { count: 0 };
  const e = await engine([
    { toolCalls: [{ name: "nope", arguments: { x: 1 } }] },
    { toolCalls: [{ name: "nope", arguments: { x: 2 } }] },
    { toolCalls: [{ name: "nope", arguments: { x: 3 } }] },
    { toolCalls: [{ name: "nope", arguments: "{" }] },
    { text: "done" },
  ], { tools: [addTool(calls)] });
  const view = await sendAndWait(e, "go");
  assert.deepEqual(lastTurn(view), { outcome: "completed", code: undefined });
  const seen = toolMessages(e.gateway.requests[1].messages).at(-1)!;
  assert.equal(seen.isError, true);
  assert.match(seen.output, /nope/);
  assert.match(seen.output, /add/);
  assert.match(seen.output, /ask_user/);
  // The calls are ordinary tool items with an error status.
  assert.deepEqual(toolItems(view).map((tool) => tool.status), [
    "error",
    "error",
    "error",
    "error",
  ]);
  await e.host.shutdown();
});

test("repeating the same unknown call still meets the repetition limit", async () => {
  const same = { toolCalls: [{ name: "nope", arguments: { x: 1 } }] };
  const e = await engine([same, same, same, same, { text: "unreached" }]);
  const view = await sendAndWait(e, "go");
  assert.deepEqual(lastTurn(view), { outcome: "failed", code: "tool_repetition" });
  await e.host.shutdown();
});

test("repetition compares the raw argument text, not the parsed input", async () => {
  const calls = { count: 0 };
  // The schema strips `note`: parsed, the four calls are equal; as sent, they differ.
  const e = await engine([
    { toolCalls: [{ name: "add", arguments: { a: 1, b: 1, note: "one" } }] },
    { toolCalls: [{ name: "add", arguments: { a: 1, b: 1, note: "two" } }] },
    { toolCalls: [{ name: "add", arguments: { a: 1, b: 1, note: "three" } }] },
    { toolCalls: [{ name: "add", arguments: { a: 1, b: 1, note: "four" } }] },
    { text: "done" },
  ], { tools: [addTool(calls)] });
  const view = await sendAndWait(e, "go");
  assert.deepEqual(lastTurn(view), { outcome: "completed", code: undefined });
  assert.equal(calls.count, 4);
  await e.host.shutdown();
});

test("an uncertain effect is committed, the model reads it, and a retry keeps it", async () => {
  let runs = 0;
  const pay = defineTool({
    name: "pay",
    description: "Pays",
    effect: "network",
    input: z.object({ amount: z.number() }),
    execute: () => {
      runs++;
      return {
        output: "payment timed out after sending",
        isError: true,
        effectOutcome: "uncertain",
      };
    },
  });
  const e = await engine([
    { toolCalls: [{ name: "pay", arguments: { amount: 5 } }] },
    { error: { retry: "never", message: "boom" } },
    { text: "I checked: the payment went through" },
  ], { tools: [pay] });
  const failed = await sendAndWait(e, "pay 5");
  assert.deepEqual(lastTurn(failed), { outcome: "failed", code: "provider_error" });
  assert.deepEqual(toolItems(failed).map((tool) => tool.status), ["uncertain"]);
  await e.threads.retry({ threadId: e.threadId, requestKey: "retry" });
  const view = await e.threads.waitForIdle(e.threadId, { timeoutMs: 10_000 });
  assert.deepEqual(lastTurn(view), { outcome: "completed", code: undefined });
  assert.equal(runs, 1, "the uncertain call is never run again");
  const seen = toolMessages(e.gateway.requests.at(-1)!.messages).at(-1)!;
  assert.equal(seen.isError, true);
  assert.match(seen.output, /timed out after sending/);
  assert.equal(toolItems(view).at(-1)!.status, "uncertain");
  await e.host.shutdown();
});
