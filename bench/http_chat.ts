/**
 * The chat route under load: N concurrent chat clients over loopback HTTP,
 * each sending TURNS turns; every turn is two tool steps (`add`, run by the
 * server) and a streamed text answer from a scripted zero-latency model.
 *
 * - `floret`: `threadApi`'s AI SDK chat route (`POST /threads/:id/chat`) on a
 *   libSQL file with `synchronous=NORMAL` (durable across process crashes).
 * - `ai-sdk`: a hono app whose route answers `streamText(...)
 *   .toUIMessageStreamResponse()` with the same script as a mock model and the
 *   same tool; nothing is stored (bench/peers_ai holds the AI SDK).
 *
 * Both servers run in this process on 127.0.0.1 (Node: @hono/node-server;
 * Bun: Bun.serve; Deno: Deno.serve); clients are `fetch` calls from the same
 * process, read to the end of each stream. Reported per N: turns/s, p50/p99
 * time from the POST to the first chunk of the body, and the RSS growth.
 *
 * Run: `npx tsx bench/http_chat.ts`, `npx bun bench/http_chat.ts`,
 * `npx deno run -A bench/http_chat.ts` (env CLIENTS=1,50,500, TURNS=3,
 * ROWS=floret,ai-sdk). The last line is `RESULT {json}`.
 *
 * @module
 */
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { z } from "zod";
import {
  defineAgent,
  defineTool,
  type Gateway,
  openHost,
  type ProviderEvent,
  type ProviderRequest,
} from "@floret/engine";
import { libsqlStore } from "@floret/engine/libsql";
import { threadApi } from "@floret/engine/http";

const env = (name: string, fallback: string): string =>
  (globalThis as { process?: { env: Record<string, string | undefined> } }).process?.env[name] ??
    fallback;
const CLIENTS = env("CLIENTS", "1,50,500").split(",").map(Number);
const TURNS = Number(env("TURNS", "3"));
const ROWS = env("ROWS", "floret,ai-sdk").split(",");
const runtime = "Deno" in globalThis ? "deno" : "Bun" in globalThis ? "bun" : "node";
const ANSWER = ["The ", "sum ", "is ", "two."];

type Fetch = (request: Request) => Response | Promise<Response>;
type Server = { port: number; close(): Promise<void> };

/** Serves `fetch` on 127.0.0.1 with the runtime's own server. */
async function serve(fetch: Fetch): Promise<Server> {
  const g = globalThis as Record<string, unknown>;
  if (runtime === "bun") {
    const bun = g.Bun as { serve(o: unknown): { port: number; stop(force: boolean): void } };
    const server = bun.serve({ hostname: "127.0.0.1", port: 0, fetch, idleTimeout: 120 });
    return { port: server.port, close: () => Promise.resolve(server.stop(true)) };
  }
  if (runtime === "deno") {
    const deno = g.Deno as {
      serve(o: unknown, h: Fetch): { addr: { port: number }; shutdown(): Promise<void> };
    };
    const server = deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, fetch);
    return { port: server.addr.port, close: () => server.shutdown() };
  }
  const { serve: nodeServe } = await import("@hono/node-server");
  return await new Promise((resolve) => {
    const server = nodeServe({ fetch, hostname: "127.0.0.1", port: 0 }, (info) =>
      resolve({
        port: info.port,
        close: () => new Promise((done) => server.close(() => done())),
      }));
  });
}

// The script, shared by both rows: after the user's message call add(0, 1),
// after a result v < 2 call add(v, 1), then stream the answer.
function nextMove(toolResults: number[]): { tool: { a: number; b: number } } | { text: string[] } {
  const last = toolResults.at(-1);
  if (last === undefined) return { tool: { a: 0, b: 1 } };
  if (last < 2) return { tool: { a: last, b: 1 } };
  return { text: ANSWER };
}

/** Floret's gateway for the script. */
const floretGateway: Gateway = {
  info: {
    provider: "bench",
    model: "chat-load",
    stateKey: "bench:chat-load",
    capabilities: { contextWindowTokens: 128_000 },
  },
  async *stream(request: ProviderRequest): AsyncGenerator<ProviderEvent> {
    // Tool results since the turn's last user message.
    const results: number[] = [];
    for (const message of request.messages) {
      if (message.role === "user") results.length = 0;
      if (message.role === "tool") results.push(Number(message.output));
    }
    const move = nextMove(results);
    if ("tool" in move) {
      const callId = `call_${results.length}`;
      yield { type: "tool-call-start", callId, name: "add" };
      yield { type: "tool-call-delta", callId, argumentsDelta: JSON.stringify(move.tool) };
      yield { type: "tool-call-end", callId };
      yield { type: "finish", reason: "tool_calls" };
    } else {
      for (const delta of move.text) yield { type: "text", delta };
      yield { type: "finish", reason: "stop" };
    }
  },
};

const floretAdd = defineTool({
  name: "add",
  description: "Add two numbers",
  input: z.object({ a: z.number(), b: z.number() }),
  execute: ({ a, b }) => String(a + b),
});

/** Floret's chat route on a libSQL NORMAL file; threads made before the clients start. */
async function floretServer(
  clients: number,
): Promise<{ fetch: Fetch; threadIds: string[]; close(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), "floret-http-chat-"));
  const store = libsqlStore({ url: `file:${join(dir, "chat.db")}`, synchronous: "normal" });
  const host = await openHost({ store });
  const threads = host.threads({
    agent: defineAgent({
      id: "chat-load",
      systemPrompt: "Add, then answer.",
      gateway: floretGateway,
      tools: [floretAdd],
    }),
  });
  const threadIds: string[] = [];
  for (let i = 0; i < clients; i++) {
    threadIds.push((await threads.create({ requestKey: `c${i}` })).threadId);
  }
  const app = threadApi(threads, { authorize: () => true });
  return {
    fetch: (request) => app.fetch(request),
    threadIds,
    close: async () => {
      await host.shutdown();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The AI SDK server: streamText with a mock model running the same script, in a hono app. */
async function aiSdkServer(
  clients: number,
): Promise<{ fetch: Fetch; threadIds: string[]; close(): Promise<void> }> {
  const require = createRequire(new URL("./peers_ai/package.json", import.meta.url));
  const load = (name: string) => import(pathToFileURL(require.resolve(name)).href);
  const ai = await load("ai");
  const { MockLanguageModelV4 } = await load("ai/test");
  const { Hono } = await load("hono");
  const usage = {
    inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
    outputTokens: { total: 1, text: 1, reasoning: 0 },
  };
  const model = new MockLanguageModelV4({
    doStream: (
      { prompt }: {
        prompt: { role: string; content: { type: string; output?: { value?: unknown } }[] }[];
      },
    ) => {
      const results: number[] = [];
      for (const message of prompt) {
        if (message.role === "user") results.length = 0;
        if (message.role === "tool") {
          for (const part of message.content) {
            if (part.type === "tool-result") results.push(Number(part.output?.value));
          }
        }
      }
      const move = nextMove(results);
      const chunks: unknown[] = "tool" in move
        ? [
          {
            type: "tool-call",
            toolCallId: `call_${results.length}`,
            toolName: "add",
            input: JSON.stringify(move.tool),
          },
          { type: "finish", finishReason: { unified: "tool-calls", raw: "tool_calls" }, usage },
        ]
        : [
          { type: "text-start", id: "t" },
          ...move.text.map((delta) => ({ type: "text-delta", id: "t", delta })),
          { type: "text-end", id: "t" },
          { type: "finish", finishReason: { unified: "stop", raw: "stop" }, usage },
        ];
      return Promise.resolve({
        stream: ai.simulateReadableStream({ chunks, initialDelayInMs: null, chunkDelayInMs: null }),
      });
    },
  });
  const tools = {
    add: ai.tool({
      description: "Add two numbers",
      inputSchema: z.object({ a: z.number(), b: z.number() }),
      execute: ({ a, b }: { a: number; b: number }) => String(a + b),
    }),
  };
  const app = new Hono();
  app.post(
    "/threads/:id/chat",
    async (c: { req: { json(): Promise<{ messages: unknown[] }> } }) => {
      const { messages } = await c.req.json();
      const result = ai.streamText({
        model,
        system: "Add, then answer.",
        messages: await ai.convertToModelMessages(messages),
        tools,
        stopWhen: ai.stepCountIs(3),
      });
      return result.toUIMessageStreamResponse();
    },
  );
  return {
    fetch: (request) => app.fetch(request),
    threadIds: Array.from({ length: clients }, (_, i) => `chat-${i}`),
    close: () => Promise.resolve(),
  };
}

/** One client: TURNS turns in a row; returns the first-chunk times (ms). */
async function client(base: string, threadId: string, index: number): Promise<number[]> {
  const firsts: number[] = [];
  for (let turn = 0; turn < TURNS; turn++) {
    const messageId = `m-${index}-${turn}`;
    const started = performance.now();
    const response = await fetch(`${base}/threads/${threadId}/chat`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        id: threadId,
        trigger: "submit-message",
        messageId,
        messages: [{
          id: messageId,
          role: "user",
          parts: [{ type: "text", text: `Turn ${turn}` }],
        }],
      }),
    });
    if (!response.ok || !response.body) throw new Error(`chat answered ${response.status}`);
    const reader = response.body.getReader();
    let first = true;
    let bytes = "";
    const decoder = new TextDecoder();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      if (first) {
        firsts.push(performance.now() - started);
        first = false;
      }
      bytes += decoder.decode(value, { stream: true });
    }
    if (!bytes.includes("two.") && !bytes.includes('"two."')) {
      if (!bytes.includes('"delta":"two."')) {
        throw new Error(`turn without the answer: ${bytes.slice(-300)}`);
      }
    }
  }
  return firsts;
}

const percentile = (values: number[], p: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))];
};

const rows: Record<string, unknown>[] = [];
for (const clients of CLIENTS) {
  for (const row of ROWS) {
    const made = row === "floret" ? await floretServer(clients) : await aiSdkServer(clients);
    const server = await serve(made.fetch);
    const base = `http://127.0.0.1:${server.port}`;
    // One warm-up turn per row, outside the figures.
    await client(base, made.threadIds[0], -1);
    const rssBefore = (globalThis as { process?: { memoryUsage(): { rss: number } } }).process
      ?.memoryUsage().rss ?? 0;
    const started = performance.now();
    const firsts = (await Promise.all(made.threadIds.map((id, i) => client(base, id, i)))).flat();
    const seconds = (performance.now() - started) / 1000;
    const rssAfter = (globalThis as { process?: { memoryUsage(): { rss: number } } }).process
      ?.memoryUsage().rss ?? 0;
    await server.close();
    await made.close();
    const figures = {
      row,
      clients,
      turns: clients * TURNS,
      turnsPerSec: (clients * TURNS) / seconds,
      firstChunkP50Ms: percentile(firsts, 0.5),
      firstChunkP99Ms: percentile(firsts, 0.99),
      rssGrowthMB: (rssAfter - rssBefore) / 2 ** 20,
    };
    rows.push(figures);
    console.log(
      `${runtime} ${row.padEnd(7)} N=${String(clients).padStart(3)}: ${
        figures.turnsPerSec.toFixed(0)
      } turns/s, ` +
        `first chunk p50 ${figures.firstChunkP50Ms.toFixed(1)} ms p99 ${
          figures.firstChunkP99Ms.toFixed(1)
        } ms, ` +
        `RSS +${figures.rssGrowthMB.toFixed(0)} MB`,
    );
  }
}
const ratios: Record<string, unknown> = {};
for (const clients of CLIENTS) {
  const ours = rows.find((r) => r.row === "floret" && r.clients === clients) as
    | Record<string, number>
    | undefined;
  const theirs = rows.find((r) => r.row === "ai-sdk" && r.clients === clients) as
    | Record<string, number>
    | undefined;
  if (ours && theirs) {
    ratios[`N=${clients}`] = {
      throughput: ours.turnsPerSec / theirs.turnsPerSec,
      p99FirstChunk: ours.firstChunkP99Ms / theirs.firstChunkP99Ms,
    };
  }
}
console.log(
  `RESULT ${JSON.stringify({ bench: "http_chat", runtime, turnsPerClient: TURNS, rows, ratios })}`,
);
