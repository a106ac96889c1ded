// Audit (round 11): the HTTP event streams read raw (http.md "Events (SSE)"
// and "Chat streams"), with text that streams in many small pieces across
// many batches. A stream opened before the send and one opened mid-stream
// (sending a Last-Event-ID, which http.md says nothing replays) each start with
// a whole view, continue without gap, and end equal to waitForIdle's view. A
// chat stream's text and reasoning deltas add up to exactly the settled text,
// each tool call shows once, and a chat posted while another turn streams
// follows only its own (queued) turn.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { createParser, type EventSourceMessage } from "eventsource-parser";
import { z } from "zod";
import {
  defineAgent,
  defineTool,
  type Gateway,
  memoryStore,
  openHost,
  type ProviderEvent,
  type ThreadUpdate,
  type ThreadView,
  type ViewOp,
} from "@floret/engine";
import { threadApi } from "@floret/engine/http";
import { applyOps, plain, stateOf } from "./support/audit_observer.ts";

type Move = { text: string; reasoning?: string; holdMidway?: boolean } | {
  call: string;
  args: unknown;
};

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Streams each move's text in 3-character pieces with short pauses (many batches). */
function piecewiseGateway(
  moves: Move[],
  started: () => void,
  resumed: Promise<void>,
): Gateway {
  let next = 0;
  return {
    info: { provider: "test", model: "pieces", stateKey: "test:pieces", capabilities: {} },
    async *stream(): AsyncIterable<ProviderEvent> {
      const move = moves[next++];
      if (!move) throw new Error("no more moves");
      if ("call" in move) {
        const callId = `call-${next}`;
        yield { type: "tool-call-start", callId, name: move.call };
        yield { type: "tool-call-delta", callId, argumentsDelta: JSON.stringify(move.args) };
        yield { type: "tool-call-end", callId };
        yield { type: "finish", reason: "tool_calls" };
        return;
      }
      for (const piece of move.reasoning?.match(/.{1,3}/gu) ?? []) {
        yield { type: "reasoning", delta: piece };
        await pause(1);
      }
      const pieces = move.text.match(/.{1,3}/gu) ?? [];
      for (const [index, piece] of pieces.entries()) {
        yield { type: "text", delta: piece };
        if (index === Math.floor(pieces.length / 2)) {
          started();
          // Half the text is out: the test joins while the rest is still to come.
          if (move.holdMidway) await resumed;
        }
        await pause(2);
      }
      yield { type: "finish", reason: "stop" };
    },
  };
}

async function setUp(moves: Move[]) {
  let streaming!: () => void;
  const textStarted = new Promise<void>((resolve) => (streaming = resolve));
  let resume!: () => void;
  const resumed = new Promise<void>((resolve) => (resume = resolve));
  const add = defineTool({
    name: "add",
    description: "Adds",
    input: z.object({ a: z.number(), b: z.number() }),
    execute: ({ a, b }) => String(a + b),
  });
  const host = await openHost({ store: memoryStore() });
  const threads = host.threads({
    agent: defineAgent({
      id: "sse",
      systemPrompt: "SSE.",
      gateway: piecewiseGateway(moves, () => streaming(), resumed),
      tools: [add],
    }),
  });
  const { threadId } = await threads.create({ requestKey: "create" });
  const app = threadApi(threads, { authorize: () => true });
  return { host, threads, threadId, app, textStarted, resume };
}

/** Reads SSE messages from a response body as they come. */
function messages(response: Response): AsyncIterator<EventSourceMessage> {
  const queue: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (event) => queue.push(event) });
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  return {
    async next() {
      while (queue.length === 0) {
        const chunk = await reader.read();
        if (chunk.done) return { done: true, value: undefined };
        parser.feed(decoder.decode(chunk.value, { stream: true }));
      }
      return { done: false, value: queue.shift()! };
    },
    async return() {
      await reader.cancel().catch(() => {});
      return { done: true, value: undefined };
    },
  };
}

/** A raw events stream, applied to the view it opened with. */
async function rawObserver(app: ReturnType<typeof threadApi>, threadId: string, headers = {}) {
  const response = await app.fetch(
    new Request(`http://127.0.0.1/threads/${threadId}/events`, { headers }),
  );
  assert.equal(response.status, 200);
  const stream = messages(response);
  const first = await stream.next();
  assert.equal(first.value?.event, "view", "every stream starts with a whole view");
  const local = plain(JSON.parse(first.value!.data) as ThreadView);
  const problems: string[] = [];
  const opened = local.viewVersion;
  return {
    local,
    problems,
    opened,
    async reach(version: number): Promise<void> {
      while (local.viewVersion < version) {
        const next = await stream.next();
        assert.equal(next.done, false, "the stream goes on");
        const message = next.value!;
        assert.equal(message.event, "batch", `no ${message.event} expected`);
        const update = JSON.parse(message.data) as Extract<ThreadUpdate, { type: "batch" }>;
        if (update.version <= opened) {
          problems.push(`a batch at or below the view: ${update.version}`);
        }
        if (update.baseVersion !== local.viewVersion) {
          problems.push(`gap: at ${local.viewVersion}, got ${update.baseVersion}`);
        }
        applyOps(local, update.ops as ViewOp[], problems);
        local.viewVersion = update.version;
      }
    },
    close: () => stream.return?.(),
  };
}

type Chunk = { type: string; [key: string]: unknown };

async function chatChunks(response: Response): Promise<(Chunk | "[DONE]")[]> {
  const out: (Chunk | "[DONE]")[] = [];
  const stream = messages(response);
  for (;;) {
    const next = await stream.next();
    if (next.done) return out;
    out.push(next.value.data === "[DONE]" ? "[DONE]" : JSON.parse(next.value.data) as Chunk);
  }
}

function chatRequest(threadId: string, id: string, text: string): Request {
  return new Request(`http://127.0.0.1/threads/${threadId}/chat`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      id: threadId,
      trigger: "submit-message",
      messages: [{ id, role: "user", parts: [{ type: "text", text }] }],
    }),
  });
}

function deltas(chunks: (Chunk | "[DONE]")[], type: string): string {
  return chunks.filter((c): c is Chunk => c !== "[DONE]" && c.type === type)
    .map((c) => c.delta as string).join("");
}

describe("raw event streams", () => {
  test("one opened before the send and one mid-stream (with Last-Event-ID) both end at waitForIdle's view", async () => {
    const answer = "ünïcode 🌼 streamed in many small pieces across many batches";
    const e = await setUp([
      { call: "add", args: { a: 1, b: 2 } },
      { text: answer, holdMidway: true },
    ]);
    const early = await rawObserver(e.app, e.threadId);
    await e.threads.send({ threadId: e.threadId, requestKey: "s", input: { text: "go" } });
    await e.textStarted;
    // The engine shows streamed text within 25 ms: wait until the live item is there.
    while ((await e.threads.view(e.threadId)).items.at(-1)?.live !== true) await pause(2);
    const late = await rawObserver(e.app, e.threadId, { "last-event-id": "1" });
    assert.equal(late.local.items.at(-1)?.live, true, "joined while the text streams");
    e.resume();
    const final = await e.threads.waitForIdle(e.threadId, { timeoutMs: 10_000 });
    for (const [name, observer] of [["early", early], ["late", late]] as const) {
      await observer.reach(final.viewVersion);
      assert.deepEqual(observer.problems, [], name);
      assert.deepEqual(stateOf(observer.local), stateOf(final), name);
      await observer.close();
    }
    assert.equal(final.items.at(-1)?.text, answer);
    await e.host.shutdown();
  });
});

describe("chat streams", () => {
  test("deltas add up to exactly the settled text and reasoning; each tool call shows once", async () => {
    const text = "The sum is 3 — ünïcode 🌼 in many pieces.";
    const reasoning = "adding one and two, carefully";
    const e = await setUp([
      { call: "add", args: { a: 1, b: 2 } },
      { call: "add", args: { a: 3, b: 4 } },
      { text, reasoning },
    ]);
    const chunks = await chatChunks(await e.app.fetch(chatRequest(e.threadId, "m1", "sum?")));
    assert.equal(deltas(chunks, "text-delta"), text);
    assert.equal(deltas(chunks, "reasoning-delta"), reasoning);
    const types = chunks.map((c) => c === "[DONE]" ? c : c.type);
    assert.equal(types.filter((t) => t === "tool-input-available").length, 2);
    assert.equal(types.filter((t) => t === "tool-output-available").length, 2);
    assert.equal(types.filter((t) => t === "text-start").length, 1);
    assert.equal(types.filter((t) => t === "text-end").length, 1);
    assert.deepEqual(types.slice(-2), ["finish", "[DONE]"]);
    const view = await e.threads.view(e.threadId);
    assert.equal(view.items.at(-1)?.text, text);
    await e.host.shutdown();
  });

  test("a chat posted while another turn streams follows only its own queued turn", async () => {
    const firstAnswer = "first answer, streamed slowly in pieces";
    const secondAnswer = "second answer, also in pieces";
    const e = await setUp([{ text: firstAnswer }, { text: secondAnswer }]);
    await e.threads.send({ threadId: e.threadId, requestKey: "s", input: { text: "one" } });
    await e.textStarted;
    const chunks = await chatChunks(await e.app.fetch(chatRequest(e.threadId, "m2", "two")));
    assert.equal(deltas(chunks, "text-delta"), secondAnswer);
    const view = await e.threads.waitForIdle(e.threadId, { timeoutMs: 10_000 });
    assert.deepEqual(view.items.map((item) => item.text), [
      "one",
      firstAnswer,
      "two",
      secondAnswer,
    ]);
    await e.host.shutdown();
  });

  test("the same message posted again mid-stream replays the turn: its deltas add up to the whole text once", async () => {
    const answer = "a replayed answer — ünïcode 🌼 — in many pieces";
    const e = await setUp([{ text: answer, holdMidway: true }]);
    const first = e.app.fetch(chatRequest(e.threadId, "m1", "hello"));
    await e.textStarted;
    while ((await e.threads.view(e.threadId)).items.at(-1)?.live !== true) await pause(2);
    const replay = e.app.fetch(chatRequest(e.threadId, "m1", "hello"));
    const replayResponse = await replay;
    e.resume();
    const [one, two] = await Promise.all([chatChunks(await first), chatChunks(replayResponse)]);
    assert.equal(deltas(one, "text-delta"), answer);
    assert.equal(deltas(two, "text-delta"), answer, "the replay's text, once");
    const view = await e.threads.waitForIdle(e.threadId, { timeoutMs: 10_000 });
    assert.equal(view.turns.length, 1, "no new turn");
    await e.host.shutdown();
  });

  test("a chat stream read only after its turn ended (its subscriber fell behind) still tells everything once", async () => {
    const calls = 40;
    const text = "the final answer after many tools";
    const moves: Move[] = Array.from({ length: calls }, (_, n) => ({
      call: "add",
      args: { a: n, b: 1 },
    }));
    const e = await setUp([...moves, { text, reasoning: "summing up" }]);
    const response = await e.app.fetch(chatRequest(e.threadId, "m1", "add a lot"));
    const view = await e.threads.waitForIdle(e.threadId, { timeoutMs: 20_000 });
    assert.equal(view.items.filter((item) => item.kind === "tool").length, calls);
    const chunks = await chatChunks(response);
    const types = chunks.map((c) => c === "[DONE]" ? c : c.type);
    assert.equal(types.filter((t) => t === "tool-input-available").length, calls);
    assert.equal(types.filter((t) => t === "tool-output-available").length, calls);
    const ids = chunks.filter((c): c is Chunk =>
      c !== "[DONE]" && c.type === "tool-output-available"
    )
      .map((c) => c.toolCallId);
    assert.equal(new Set(ids).size, calls, "each call's output once");
    assert.equal(deltas(chunks, "text-delta"), text);
    assert.equal(deltas(chunks, "reasoning-delta"), "summing up");
    assert.deepEqual(types.slice(-2), ["finish", "[DONE]"]);
    await e.host.shutdown();
  });
});
