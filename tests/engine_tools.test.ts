import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import { defineTool, type ObservationEvent, type ThreadView } from "@floret/engine";
import { addTool, engine, lastTurn, sendAndWait } from "./support/engine.ts";

const toolMessages = (messages: { role: string }[]) =>
  messages.filter((m) => m.role === "tool") as {
    role: "tool";
    output: string;
    isError?: boolean;
    name: string;
  }[];
const tools = (view: ThreadView) =>
  view.items.filter((item) => item.kind === "tool").map((item) => item.tool!);

describe("tool calls", () => {
  test("a denied call is a normal result the model sees", async () => {
    const ran = { count: 0 };
    const rm = defineTool({
      name: "rm",
      description: "Remove a file",
      effect: "write",
      input: z.object({ path: z.string() }),
      permission: (
        input,
      ) => (input.path.startsWith("/etc")
        ? "deny"
        : input.path.startsWith("/home")
        ? "ask"
        : "allow"),
      execute: () => {
        ran.count++;
        return "removed";
      },
    });
    const e = await engine([
      {
        toolCalls: [
          { name: "rm", arguments: { path: "/etc/passwd" } },
          { name: "rm", arguments: { path: "/tmp/x" } },
          { name: "rm", arguments: { path: "/home/me" } },
        ],
      },
      { text: "done" },
    ], { tools: [rm] });
    const waiting = await sendAndWait(e, "clean up");
    assert.deepEqual(tools(waiting).map((t) => t.status), [
      "denied",
      "completed",
      "waiting_approval",
    ]);
    assert.equal(ran.count, 1, "neither the denied call nor the one needing approval ran");
    await e.threads.respond({
      threadId: e.threadId,
      requestKey: "deny",
      interactionId: waiting.pending[0].id,
      decision: "deny",
    });
    const view = await e.threads.waitForIdle(e.threadId, { timeoutMs: 10_000 });
    assert.deepEqual(tools(view).map((t) => t.status), ["denied", "completed", "denied"]);
    assert.equal(ran.count, 1);
    const results = toolMessages(e.gateway.requests[1].messages);
    assert.equal(results[0].isError, true);
    assert.match(results[0].output, /denied/);
    assert.equal(results[1].output, "removed");
    assert.match(results[2].output, /user denied/);
    assert.deepEqual(lastTurn(view), { outcome: "completed", code: undefined });
    await e.host.shutdown();
  });

  test("invalid arguments never run; the model gets the error; two regenerations, then the turn fails", async () => {
    const calls = { count: 0 };
    const e = await engine([
      { toolCalls: [{ name: "add", arguments: "{not json" }] },
      { toolCalls: [{ name: "add", arguments: { a: "one", b: 2 } }] },
      { toolCalls: [{ name: "add", arguments: { a: 1 } }] },
    ], { tools: [addTool(calls)] });
    const view = await sendAndWait(e, "add badly");
    assert.equal(calls.count, 0);
    assert.deepEqual(tools(view), [], "rejected calls produce no tool item");
    assert.deepEqual(lastTurn(view), {
      outcome: "failed",
      code: "tool_argument_correction_exhausted",
    });
    const feedback = toolMessages(e.gateway.requests[1].messages)[0];
    assert.equal(feedback.isError, true);
    assert.match(feedback.output, /not valid JSON/);
    assert.match(toolMessages(e.gateway.requests[2].messages)[1].output, /do not match its schema/);
    await e.host.shutdown();
  });

  test("a clean batch ends the correction episode; an unknown tool is an error result and the loop goes on", async () => {
    const calls = { count: 0 };
    const e = await engine([
      { toolCalls: [{ name: "add", arguments: "{" }] },
      { toolCalls: [{ name: "add", arguments: "{" }] },
      { toolCalls: [{ name: "add", arguments: { a: 1, b: 1 } }] },
      { toolCalls: [{ name: "nope", arguments: {} }, { name: "add", arguments: { a: 2, b: 2 } }] },
      { toolCalls: [{ name: "add", arguments: "{" }] },
      { text: "finally" },
    ], { tools: [addTool(calls)] });
    const view = await sendAndWait(e, "go");
    assert.deepEqual(lastTurn(view), { outcome: "completed", code: undefined });
    assert.equal(calls.count, 2, "valid siblings of an invalid call still run");
    assert.match(
      toolMessages(e.gateway.requests[4].messages).at(-2)!.output,
      /Unknown tool "nope"/,
    );
    await e.host.shutdown();
  });

  test("the third identical call in a row is refused, the fourth fails the turn", async () => {
    const calls = { count: 0 };
    const same = { toolCalls: [{ name: "add", arguments: { a: 1, b: 1 } }] };
    const e = await engine([same, same, same, same, { text: "unreached" }], {
      tools: [addTool(calls)],
    });
    const view = await sendAndWait(e, "loop");
    assert.equal(calls.count, 2);
    assert.deepEqual(lastTurn(view), { outcome: "failed", code: "tool_repetition" });
    assert.match(toolMessages(e.gateway.requests[3].messages)[2].output, /already made twice/);
    await e.host.shutdown();
  });

  test("maxSteps ends a runaway turn", async () => {
    const steps = Array.from(
      { length: 5 },
      (_, i) => ({ toolCalls: [{ name: "add", arguments: { a: i, b: 1 } }] }),
    );
    const e = await engine(steps, { agent: { maxSteps: 3 } });
    const view = await sendAndWait(e, "run away");
    assert.deepEqual(lastTurn(view), { outcome: "failed", code: "max_steps" });
    assert.equal(e.gateway.requests.length, 3);
    await e.host.shutdown();
  });

  test("calls in a batch run concurrently and their results reach the model in call order", async () => {
    const order: string[] = [];
    const sleep = defineTool({
      name: "sleep",
      description: "Sleeps",
      input: z.object({ ms: z.number(), label: z.string() }),
      execute: async ({ ms, label }) => {
        await new Promise((resolve) => setTimeout(resolve, ms));
        order.push(label);
        return label;
      },
    });
    const e = await engine([
      {
        toolCalls: [{ name: "sleep", arguments: { ms: 60, label: "slow" } }, {
          name: "sleep",
          arguments: { ms: 1, label: "fast" },
        }],
      },
      { text: "ok" },
    ], { tools: [sleep] });
    await sendAndWait(e, "go");
    assert.deepEqual(order, ["fast", "slow"]);
    assert.deepEqual(toolMessages(e.gateway.requests[1].messages).map((m) => m.output), [
      "slow",
      "fast",
    ]);
    await e.host.shutdown();
  });

  test("a thrown error is an error result; an uncertain effect is committed and the turn goes on", async () => {
    const boom = defineTool({
      name: "boom",
      description: "Fails",
      input: z.object({}),
      execute: () => {
        throw new Error("disk full");
      },
    });
    const maybe = defineTool({
      name: "maybe",
      description: "Unsure",
      effect: "network",
      input: z.object({}),
      execute: () => ({
        output: "timed out after sending",
        isError: true,
        effectOutcome: "uncertain" as const,
      }),
    });
    const e = await engine([
      { toolCalls: [{ name: "boom", arguments: {} }] },
      { toolCalls: [{ name: "maybe", arguments: {} }] },
      { text: "I will check before paying again" },
    ], { tools: [boom, maybe] });
    const view = await sendAndWait(e, "go");
    // Third wave (DESIGN §11): the uncertain result is the call's result; the model reads it.
    assert.deepEqual(tools(view).map((t) => t.status), ["error", "uncertain"]);
    assert.match(tools(view)[0].output!, /disk full/);
    assert.deepEqual(lastTurn(view), { outcome: "completed", code: undefined });
    const seen = toolMessages(e.gateway.requests[2].messages).at(-1)!;
    assert.equal(seen.isError, true);
    assert.match(seen.output, /timed out after sending/);
    await e.host.shutdown();
  });

  test("outputs over 64 KiB reach the model bounded; the view keeps the artifact id", async () => {
    const big = defineTool({
      name: "dump",
      description: "Dumps",
      input: z.object({}),
      execute: () => "é".repeat(50_000) + "MIDDLE" + "x".repeat(50_000),
    });
    const e = await engine([{ toolCalls: [{ name: "dump", arguments: {} }] }, { text: "ok" }], {
      tools: [big],
    });
    const view = await sendAndWait(e, "go");
    const output = toolMessages(e.gateway.requests[1].messages)[0].output;
    assert.ok(new TextEncoder().encode(output).length < 40_000);
    assert.match(output, /bytes omitted; full output kept as artifact artifact_/);
    assert.ok(!output.includes("MIDDLE"));
    const artifactId = tools(view)[0].artifactId!;
    assert.ok(artifactId.startsWith("artifact_"));
    const artifact = await e.threads.artifact(e.threadId, artifactId);
    assert.equal(artifact.text, "é".repeat(50_000) + "MIDDLE" + "x".repeat(50_000));
    await assert.rejects(
      e.threads.artifact(e.threadId, "artifact_missing"),
      (error: unknown) => (error as { code?: string }).code === "invalid_input",
    );
    await e.host.shutdown();
  });

  test("the JSON Schema the model sees comes from zod", async () => {
    const e = await engine([{ text: "ok" }]);
    await sendAndWait(e, "hi");
    const [tool] = e.gateway.requests[0].tools;
    assert.equal(tool.name, "add");
    assert.deepEqual(tool.inputSchema.required, ["a", "b"]);
    assert.deepEqual((tool.inputSchema.properties as Record<string, unknown>).a, {
      type: "number",
    });
    await e.host.shutdown();
  });
});

describe("provider recovery", () => {
  test("retryable errors are retried with the same frozen request", async () => {
    const events: ObservationEvent[] = [];
    const { memoryStore, openHost, defineAgent } = await import("@floret/engine");
    const { scriptedGateway } = await import("@floret/engine/testing");
    const gateway = scriptedGateway([
      { error: { status: 503, retry: "retryable" } },
      { error: { status: 429, retry: "retryable" } },
      { text: "third time lucky" },
    ]);
    const host = await openHost({ store: memoryStore(), onEvent: (event) => events.push(event) });
    const threads = host.threads({
      agent: defineAgent({
        id: "a",
        systemPrompt: "s",
        gateway,
        providerRetry: { delaysMs: [1, 1, 1, 1] },
      }),
    });
    const { threadId } = await threads.create({ requestKey: "c" });
    await threads.send({ threadId, requestKey: "s", input: { text: "secret prompt text" } });
    const view = await threads.waitForIdle(threadId, { timeoutMs: 5000 });
    assert.deepEqual(lastTurn(view), { outcome: "completed", code: undefined });
    assert.equal(new Set(gateway.requests.map((r) => r.fingerprint)).size, 1);
    assert.equal(events.filter((e) => e.type === "provider.retry").length, 2);
    assert.ok(!JSON.stringify(events).includes("secret prompt text"), "events never carry prompts");
    await host.shutdown();
  });

  test("a non-retryable error fails the turn with provider_error and keeps the status", async () => {
    const e = await engine([{
      error: { status: 401, retry: "never", message: "Invalid API key" },
    }]);
    const view = await sendAndWait(e, "hi");
    assert.deepEqual(lastTurn(view), { outcome: "failed", code: "provider_error" });
    assert.match(view.turns[0].failure!.message, /Invalid API key/);
    assert.equal(
      (view.turns[0].failure as { provider?: { status?: number } }).provider?.status,
      401,
    );
    await e.host.shutdown();
  });

  test("retries stop after the policy's attempts; timeouts have their own limit", async () => {
    const e = await engine(
      Array.from({ length: 6 }, () => ({ error: { retry: "retryable" as const } })),
    );
    const view = await sendAndWait(e, "hi");
    assert.deepEqual(lastTurn(view), { outcome: "failed", code: "provider_error" });
    assert.equal(e.gateway.requests.length, 5, "one attempt plus four retries");
    const t = await engine(Array.from({ length: 6 }, () => ({ hang: true as const })), {
      agent: {
        timeouts: { firstOutputMs: 20 },
        providerRetry: { delaysMs: [1, 1, 1, 1], maxTimeoutRetries: 2 },
      },
    });
    const timedOut = await sendAndWait(t, "hi");
    assert.deepEqual(lastTurn(timedOut), { outcome: "failed", code: "provider_error" });
    assert.equal(t.gateway.requests.length, 3, "one attempt plus two timeout retries");
    await e.host.shutdown();
    await t.host.shutdown();
  });

  test("length finishes continue at most twice", async () => {
    const { memoryStore, openHost, defineAgent } = await import("@floret/engine");
    let requests = 0;
    const gateway = {
      info: { provider: "test", model: "m", stateKey: "test:m", capabilities: {} },
      async *stream() {
        requests++;
        yield { type: "text" as const, delta: `part ${requests} ` };
        yield { type: "finish" as const, reason: "length" as const };
      },
    };
    const host = await openHost({ store: memoryStore() });
    const threads = host.threads({ agent: defineAgent({ id: "a", systemPrompt: "s", gateway }) });
    const { threadId } = await threads.create({ requestKey: "c" });
    await threads.send({ threadId, requestKey: "s", input: { text: "write a lot" } });
    const view = await threads.waitForIdle(threadId, { timeoutMs: 5000 });
    assert.equal(requests, 3);
    assert.deepEqual(view.items.slice(1).map((i) => i.text), ["part 1 ", "part 2 ", "part 3 "]);
    assert.deepEqual(lastTurn(view), { outcome: "completed", code: undefined });
    await host.shutdown();
  });

  test("an empty answer is asked for again once", async () => {
    const e = await engine([{ text: "" }, { text: "after empty" }]);
    const view = await sendAndWait(e, "hi");
    assert.equal(e.gateway.requests.length, 2);
    assert.equal(view.items.at(-1)?.text, "after empty");
    await e.host.shutdown();
  });
});
