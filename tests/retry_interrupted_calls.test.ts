// Retry after an interruption runs the cut-off `none`/`read` calls again
// before asking the model (DESIGN §11 "Spawn after a crash"), and only then:
// a new message moves on without them, a re-run that is itself interrupted
// runs again at the next retry, a tool that now has a side effect is left
// as it was. A shutdown interrupts the turn here (the SIGKILL versions are in
// crash_recovery.test.ts and subagents_crash.test.ts); a memory store outlives
// each host.
import { test } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import { defineTool, openHost, type ProviderMessage } from "@floret/engine";
import { scriptedGateway, type ScriptStep } from "@floret/engine/testing";
import { agentOf, backing, heldTool, tools } from "./support/audit_shutdown.ts";

const READ = { toolCalls: [{ name: "read_it", arguments: {}, callId: "r1" }] };

/** A host on `open`'s store whose agent has `tool` and a scripted model; returns both. */
async function hostOn(
  open: () => ReturnType<ReturnType<typeof backing>>,
  steps: ScriptStep[],
  tool = heldTool("read_it", "read"),
) {
  const gateway = scriptedGateway(steps);
  const host = await openHost({ store: open() });
  const threads = host.threads({ agent: agentOf(gateway, [tool.tool]) });
  return { host, threads, gateway, tool };
}

/** Sends one message whose read call is held, then shuts the host down under it. */
async function interruptedRead(open: () => ReturnType<ReturnType<typeof backing>>) {
  const first = await hostOn(open, [READ]);
  const { threadId } = await first.threads.create({ requestKey: "c" });
  await first.threads.send({ threadId, requestKey: "s", input: { text: "read" } });
  await first.tool.started;
  await first.host.shutdown();
  first.tool.release("too late");
  return threadId;
}

function toolMessage(messages: ProviderMessage[], callId: string) {
  const found = messages.filter((m) => m.role === "tool" && m.callId === callId);
  assert.equal(found.length, 1, `one result for ${callId}`);
  return found[0] as Extract<ProviderMessage, { role: "tool" }>;
}

test("a new message after an interrupted read does not run it again", async () => {
  const open = backing("memory");
  const threadId = await interruptedRead(open);
  const second = await hostOn(open, [{ text: "moved on" }]);
  try {
    await second.threads.send({ threadId, requestKey: "s2", input: { text: "something else" } });
    const done = await second.threads.waitForIdle(threadId, { timeoutMs: 10_000 });
    assert.equal(done.items.at(-1)?.text, "moved on");
    assert.deepEqual(second.tool.runs, [], "only retry runs a cut-off call again");
    const cut = toolMessage(second.gateway.requests[0].messages, "r1");
    assert.equal(cut.isError, true);
    assert.match(cut.output, /interrupted before its result was recorded/);
    assert.deepEqual(tools(done).map((item) => item.tool?.status), ["cancelled"]);
  } finally {
    await second.host.shutdown();
  }
});

test("a re-run interrupted in its turn runs again at the next retry, once each time", async () => {
  const open = backing("memory");
  const threadId = await interruptedRead(open);
  // Retry starts the re-run; the host stops under it before it answers.
  const second = await hostOn(open, []);
  await second.threads.retry({ threadId, requestKey: "r1" });
  await second.tool.started;
  await second.host.shutdown();
  second.tool.release("too late again");
  assert.deepEqual(second.tool.runs, ["r1"]);

  const third = await hostOn(open, [{ text: "read done" }]);
  try {
    const cut = await third.threads.view(threadId);
    assert.equal(cut.turns.at(-1)?.outcome, "interrupted");
    assert.deepEqual(tools(cut).map((item) => item.tool?.status), ["cancelled"]);
    assert.equal(third.gateway.requests.length, 0, "nothing resumes by itself");
    await third.threads.retry({ threadId, requestKey: "r2" });
    await third.tool.started;
    third.tool.release("read at last");
    const done = await third.threads.waitForIdle(threadId, { timeoutMs: 10_000 });
    assert.equal(done.turns.at(-1)?.outcome, "completed");
    assert.equal(done.items.at(-1)?.text, "read done");
    assert.deepEqual(third.tool.runs, ["r1"]);
    assert.deepEqual(tools(done).map((item) => [item.tool?.callId, item.tool?.status]), [
      ["r1", "completed"],
    ]);
    const result = toolMessage(third.gateway.requests[0].messages, "r1");
    assert.equal(result.output, "read at last");
    assert.equal(result.isError, undefined);
  } finally {
    await third.host.shutdown();
  }
});

test("a cut-off call whose tool now has a side effect is not run again", async () => {
  const open = backing("memory");
  const threadId = await interruptedRead(open);
  let runs = 0;
  const nowWrite = defineTool({
    name: "read_it",
    description: "Now writes",
    input: z.object({}),
    effect: "write",
    execute: () => {
      runs++;
      return "wrote";
    },
  });
  const gateway = scriptedGateway([{ text: "left it" }]);
  const host = await openHost({ store: open() });
  try {
    const threads = host.threads({ agent: agentOf(gateway, [nowWrite]) });
    await threads.retry({ threadId, requestKey: "r" });
    const done = await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
    assert.equal(done.items.at(-1)?.text, "left it");
    assert.equal(runs, 0);
    const cut = toolMessage(gateway.requests[0].messages, "r1");
    assert.equal(cut.isError, true);
    assert.deepEqual(tools(done).map((item) => item.tool?.status), ["cancelled"]);
  } finally {
    await host.shutdown();
  }
});
