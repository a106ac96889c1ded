/**
 * Steering ends a batch of `read`/`none` tools in flight (DESIGN §11): those
 * calls settle `cancelled` (reason steered), write tools finish, and the next
 * request carries the steer.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import { defineTool, type LocalThreadService, type ToolContext } from "@floret/engine";
import { engine } from "./support/engine.ts";

test("a steer during a slow read and a write: the read is cancelled (steered), the write finishes", async () => {
  const signals: ToolContext[] = [];
  let releaseWrite: () => void = () => {};
  let started = 0;
  let reached: () => void = () => {};
  const both = new Promise<void>((resolve) => (reached = resolve));
  const slowRead = defineTool({
    name: "slow_read",
    description: "reads slowly",
    input: z.object({}),
    effect: "read",
    execute: async (_input, context) => {
      signals.push(context);
      if (++started === 2) reached();
      await new Promise(() => {}); // only a steer ends it
      return "never";
    },
  });
  const write = defineTool({
    name: "write_it",
    description: "writes",
    input: z.object({}),
    effect: "write",
    execute: async () => {
      if (++started === 2) reached();
      await new Promise<void>((resolve) => (releaseWrite = resolve));
      return "written";
    },
  });
  const e = await engine([
    { toolCalls: [{ name: "slow_read", arguments: {} }, { name: "write_it", arguments: {} }] },
    { text: "changed course" },
  ], { tools: [slowRead, write] });
  try {
    await e.threads.send({ threadId: e.threadId, requestKey: "s", input: { text: "go" } });
    await both;
    await (e.threads as LocalThreadService).steer({
      threadId: e.threadId,
      requestKey: "st",
      text: "stop reading, do X",
    });
    assert.equal(signals[0].signal.aborted, true, "the read's signal is aborted");
    releaseWrite();
    const view = await e.threads.waitForIdle(e.threadId, { timeoutMs: 10_000 });
    const tools = view.items.filter((item) => item.kind === "tool").map((item) => item.tool!);
    assert.deepEqual(tools.map((tool) => [tool.name, tool.status]), [
      ["slow_read", "cancelled"],
      ["write_it", "completed"],
    ]);
    assert.match(tools[0].output ?? "", /steered/);
    assert.equal(view.turns.at(-1)?.outcome, "completed");
    const last = e.gateway.requests.at(-1)!;
    const users = last.messages.flatMap((m) => m.role === "user" ? [m.text] : []);
    assert.equal(users.at(-1), "stop reading, do X");
  } finally {
    await e.host.shutdown();
  }
});
