// Audit (round 11): observation events (`openHost({ onEvent })`, DESIGN §8:
// "turn, provider attempt, retry, tool, compaction, usage") and the view's
// timing fields, with and without an observer. Every tool call that ran —
// allowed at once, or approved later by `respond` — is told to observers as
// one `tool.dispatched` then one `tool.result`; a denied call gets its result
// only. Tool items and turns carry the same fields whether or not the host
// observes (the events' clock must not be the view's clock).
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import {
  defineAgent,
  defineTool,
  memoryStore,
  type ObservationEvent,
  openHost,
  type ThreadView,
} from "@floret/engine";
import { scriptedGateway } from "@floret/engine/testing";

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

async function run(onEvent?: (event: ObservationEvent) => void): Promise<ThreadView> {
  const tool = (name: string, permission: "allow" | "ask") =>
    defineTool({
      name,
      description: name,
      input: z.object({}),
      effect: permission === "ask" ? "write" : "read",
      permission,
      execute: () => `${name} ran`,
    });
  const host = await openHost({ store: memoryStore(), ...(onEvent ? { onEvent } : {}) });
  const threads = host.threads({
    agent: defineAgent({
      id: "observed",
      systemPrompt: "Observed.",
      gateway: scriptedGateway([
        {
          toolCalls: [
            { name: "look", arguments: {}, callId: "c-look" },
            { name: "write", arguments: {}, callId: "c-write" },
            { name: "erase", arguments: {}, callId: "c-erase" },
          ],
        },
        { text: "done", usage: { inputTokens: 3, outputTokens: 1 } },
      ]),
      tools: [tool("look", "allow"), tool("write", "ask"), tool("erase", "ask")],
    }),
  });
  const { threadId } = await threads.create({ requestKey: "create" });
  await threads.send({ threadId, requestKey: "send", input: { text: "go" } });
  const waiting = await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
  const byCall = new Map(waiting.pending.map((p) => [p.callId, p.id]));
  await threads.respond({
    threadId,
    requestKey: "yes",
    interactionId: byCall.get("c-write")!,
    decision: "approve",
  });
  await threads.respond({
    threadId,
    requestKey: "no",
    interactionId: byCall.get("c-erase")!,
    decision: "deny",
  });
  const final = await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
  await host.shutdown();
  return final;
}

/** The keys each item and turn carries, which must not depend on observing. */
function shapes(view: ThreadView): string[][] {
  return [
    ...view.items.map((item) => [item.kind, ...Object.keys(item.tool ?? item).sort()]),
    ...view.turns.map((turn) => Object.keys(turn).sort()),
  ];
}

describe("observation events and the view's timing fields", () => {
  test("every call that ran is dispatched then has a result, approved ones too; a denied one has its result", async () => {
    const events: ObservationEvent[] = [];
    const final = await run((event) => events.push(event));
    assert.deepEqual(final.turns.map((turn) => turn.outcome), ["completed"]);
    for (const event of events) {
      assert.match(event.at, ISO, `${event.type}: at`);
      assert.equal(event.threadId, final.threadId, `${event.type}: threadId`);
    }
    const toolEvents = events.filter((event) => event.type.startsWith("tool."));
    const seen = toolEvents.map((event) => {
      const fields: Record<string, unknown> = event;
      return `${event.type} ${fields.callId} ${fields.status ?? ""}`;
    });
    for (const call of ["c-look", "c-write"]) {
      const dispatched = seen.indexOf(`tool.dispatched ${call} `);
      const result = seen.indexOf(`tool.result ${call} completed`);
      assert.ok(dispatched >= 0, `${call} dispatched: ${seen.join(", ")}`);
      assert.ok(result > dispatched, `${call} result after its dispatch: ${seen.join(", ")}`);
      assert.equal(
        seen.filter((line) => line.includes(` ${call} `)).length,
        2,
        `${call}: once each`,
      );
    }
    assert.deepEqual(seen.filter((line) => line.includes(" c-erase ")), [
      "tool.result c-erase denied",
    ]);
    for (const event of toolEvents.filter((e) => e.type === "tool.result")) {
      assert.equal(typeof event.durationMs, "number", `${event.callId}: durationMs`);
      assert.ok((event.durationMs as number) >= 0);
      assert.equal(typeof event.name, "string");
    }
    const turns = events.filter((event) => event.type.startsWith("turn."));
    assert.deepEqual(turns.map((event) => event.type).at(0), "turn.started");
    assert.deepEqual(turns.at(-1)?.type, "turn.ended");
    const last = turns.at(-1);
    assert.equal(last?.type === "turn.ended" ? last.outcome : undefined, "completed");
    assert.ok(turns.every((event) => event.turnId === final.turns[0]!.turnId));
  });

  test("tool items and turns carry the same fields with and without an observer", async () => {
    const observed = await run(() => {});
    const unobserved = await run();
    assert.deepEqual(shapes(observed), shapes(unobserved));
    const tools = unobserved.items.filter((item) => item.kind === "tool");
    assert.deepEqual(
      tools.map((
        item,
      ) => [item.tool!.name, item.tool!.status, !!item.tool!.startedAt, !!item.tool!.endedAt]),
      [["look", "completed", true, true], ["write", "completed", true, true], [
        "erase",
        "denied",
        false,
        true,
      ]],
    );
    const turn = unobserved.turns[0]!;
    for (const key of ["durationMs", "elapsedMs", "waitingMs", "workMs"] as const) {
      assert.equal(typeof turn[key], "number", key);
    }
    assert.equal(turn.elapsedMs, (turn.waitingMs ?? 0) + (turn.workMs ?? 0));
  });

  test("every turn that ends is told once as turn.ended with its outcome, cancelled ones too", async () => {
    const events: ObservationEvent[] = [];
    const host = await openHost({ store: memoryStore(), onEvent: (event) => events.push(event) });
    const threads = host.threads({
      agent: defineAgent({
        id: "ends",
        systemPrompt: "Ends.",
        providerRetry: { disabled: true },
        gateway: scriptedGateway([
          { hang: true },
          { error: { retry: "never", message: "boom" } },
          { toolCalls: [{ name: "ask", arguments: {} }] },
          { hang: true },
          { text: "fine" },
        ]),
        tools: [defineTool({
          name: "ask",
          description: "Needs approval",
          input: z.object({}),
          permission: "ask",
          execute: () => "ran",
        })],
      }),
    });
    const { threadId } = await threads.create({ requestKey: "create" });
    const send = (key: string) => threads.send({ threadId, requestKey: key, input: { text: key } });
    await send("immediate");
    await threads.cancel({ threadId, requestKey: "c1" });
    await send("fails");
    await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
    await send("waits");
    const waiting = await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
    assert.equal(waiting.status, "waiting");
    await threads.cancel({ threadId, requestKey: "c2" });
    await send("graceful");
    await threads.cancel({ threadId, requestKey: "c3", mode: "graceful" });
    // A graceful stop answers once requested (DESIGN §11); the turn settles after.
    await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
    await send("completes");
    const final = await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
    await host.shutdown();
    const outcomes = final.turns.map((turn) => turn.outcome);
    assert.deepEqual(outcomes, ["cancelled", "failed", "cancelled", "cancelled", "completed"]);
    const ended = events.filter((event) => event.type === "turn.ended");
    assert.deepEqual(
      ended.map((event) => [event.turnId, event.outcome]),
      final.turns.map((turn) => [turn.turnId, turn.outcome]),
      "one turn.ended per turn, in order, with the view's outcome",
    );
    assert.equal(ended[1]?.failureCode, "provider_error");
    for (const event of ended) {
      assert.equal(event.threadId, threadId);
      assert.match(event.at, ISO);
    }
  });

  test("deleting a thread whose turn runs tells its end once, as cancelled", async () => {
    const events: ObservationEvent[] = [];
    const host = await openHost({ store: memoryStore(), onEvent: (event) => events.push(event) });
    const threads = host.threads({
      agent: defineAgent({
        id: "deleted",
        systemPrompt: "D.",
        gateway: scriptedGateway([{ hang: true }]),
      }),
    });
    const { threadId } = await threads.create({ requestKey: "create" });
    const sent = await threads.send({ threadId, requestKey: "s", input: { text: "go" } });
    await threads.delete({ threadId, requestKey: "delete" });
    await host.shutdown();
    const turnEvents = events.filter((event) => event.type.startsWith("turn."));
    assert.deepEqual(
      turnEvents.map((event) => [
        event.type,
        event.turnId,
        event.type === "turn.ended" ? event.outcome : undefined,
      ]),
      [["turn.started", sent.turnId, undefined], ["turn.ended", sent.turnId, "cancelled"]],
    );
  });
});
