/**
 * The public unions narrow: `ThreadItem` by `kind`, `Interaction` by `kind`,
 * `ViewOp` by `op` (a component's value by its name) and `ObservationEvent`
 * by `type`. Most checks are compile-time (this file fails tsc and deno check
 * if a payload stays optional after narrowing); the runtime part confirms the
 * engine's real values have the shapes the types promise.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import type {
  Interaction,
  ObservationEvent,
  Question,
  QueuedInput,
  ThreadItem,
  ThreadStatus,
  ThreadUpdate,
  ThreadView,
  ToolCallView,
  TurnSummary,
  ViewOp,
} from "@floret/engine";
import { defineAgent, memoryStore, openHost } from "@floret/engine";
import { scriptedGateway } from "@floret/engine/testing";
import { askUser, writeCall, writeTool } from "./support/interactions.ts";

/** Each narrowed kind exposes its payload without `!` or `?.`. */
function payloadOf(item: ThreadItem): string {
  switch (item.kind) {
    case "tool": {
      const tool: ToolCallView = item.tool;
      return `${tool.name}:${tool.status}`;
    }
    case "interaction": {
      const interaction: Interaction = item.interaction;
      return interaction.id;
    }
    case "user":
    case "assistant":
    case "thinking": {
      const text: string = item.text;
      return text;
    }
  }
}

/** After `kind === "input"`, `questions` is set; after `"approval"`, call and tool are. */
function promptsOf(interaction: Interaction): string[] {
  if (interaction.kind === "input") {
    const questions: Question[] = interaction.questions;
    return questions.map((question) => question.prompt);
  }
  const callId: string = interaction.callId;
  const toolName: string = interaction.toolName;
  return [`${toolName}#${callId}`];
}

/** A component op's value is typed by its name. */
function componentValue(op: ViewOp): unknown {
  if (op.op !== "component") return undefined;
  switch (op.name) {
    case "status": {
      const status: ThreadStatus = op.value;
      return status;
    }
    case "turns": {
      const turns: TurnSummary[] = op.value;
      return turns.length;
    }
    case "queue": {
      const queue: QueuedInput[] = op.value;
      return queue.length;
    }
    case "pending": {
      const pending: Interaction[] = op.value;
      return pending.length;
    }
    default:
      return op.value;
  }
}

/** An observation's fields are typed by its `type`. */
function describeEvent(event: ObservationEvent): string {
  switch (event.type) {
    case "tool.result": {
      const duration: number = event.durationMs;
      return `${event.name} ${event.status} ${duration}`;
    }
    case "provider.retry": {
      const delay: number = event.delayMs;
      return `retry ${event.attempt} in ${delay}`;
    }
    case "turn.ended":
      return `ended ${event.outcome} ${event.failureCode ?? ""}`;
    default:
      return event.type;
  }
}

test("items, interactions, ops and observations narrow by their discriminant", async () => {
  const events: ObservationEvent[] = [];
  const host = await openHost({ store: memoryStore(), onEvent: (event) => events.push(event) });
  const gateway = scriptedGateway([
    askUser([{ id: "size", prompt: "Which size?" }]),
    writeCall("a", "c1"),
    { text: "done" },
  ]);
  const threads = host.threads({
    agent: defineAgent({ id: "narrow", systemPrompt: "Test.", gateway, tools: [writeTool([])] }),
  });
  const { threadId } = await threads.create({ requestKey: "create" });
  const e = { threads, threadId };
  const updates = e.threads.subscribe(e.threadId)[Symbol.asyncIterator]();
  await threads.send({ threadId, requestKey: "go", input: { text: "go" } });
  const asked = await threads.waitForIdle(threadId);
  assert.equal(asked.pending.length, 1);
  assert.deepEqual(promptsOf(asked.pending[0]!), ["Which size?"]);
  const question = asked.items.find((item) => item.kind === "interaction");
  assert.ok(question?.kind === "interaction");
  assert.deepEqual(question.interaction.kind === "input" && question.interaction.questions, [
    { id: "size", prompt: "Which size?" },
  ]);

  await e.threads.respond({
    threadId: e.threadId,
    requestKey: "answer",
    interactionId: asked.pending[0]!.id,
    answers: [{ questionId: "size", value: "L" }],
  });
  const approval = await e.threads.waitForIdle(e.threadId);
  assert.deepEqual(promptsOf(approval.pending[0]!), ["write#c1"]);
  const toolItem = approval.items.find((item) => item.kind === "tool");
  assert.ok(toolItem?.kind === "tool");
  assert.equal(payloadOf(toolItem), "write:waiting_approval");
  assert.equal(toolItem.interaction?.kind, "approval");

  const seen: ViewOp[] = [];
  const drain = (async () => {
    for (;;) {
      const next = await updates.next();
      if (next.done) return;
      const update: ThreadUpdate = next.value;
      if (update.type === "batch") seen.push(...update.ops);
      if (seen.some((op) => op.op === "component" && op.name === "status" && op.value === "idle")) {
        return;
      }
    }
  })();
  await e.threads.respond({
    threadId: e.threadId,
    requestKey: "approve",
    interactionId: approval.pending[0]!.id,
    decision: "approve",
  });
  const done: ThreadView = await e.threads.waitForIdle(e.threadId);
  await drain;
  await updates.return?.();
  assert.deepEqual(done.items.map(payloadOf).slice(-2), ["write:completed", "done"]);
  const values = seen.filter((op) => op.op === "component").map(componentValue);
  assert.ok(values.includes("idle"), "the status component carries the status itself");

  const lines = events.map(describeEvent);
  assert.ok(lines.some((line) => /^write completed \d+$/.test(line)), lines.join("\n"));
  assert.ok(lines.includes("ended completed "), lines.join("\n"));
  await host.shutdown();
});
