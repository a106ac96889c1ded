/**
 * First-token latency: how long after `send` the first text delta reaches a
 * subscriber, minus the gateway's own time from its call to its first delta
 * (so only the engine's work is left: admission, its commit, the run's start,
 * the request build, the live item and the update to the subscriber).
 *
 * Variants: `memory`, `libsql-normal`, `libsql-full` (a WAL file in /tmp);
 * paths: `inproc` (a `subscribe` iterator) and `chat` (the AI SDK chat route
 * of `threadApi`, `POST /threads/:id/chat` through `app.fetch`, until the
 * first `text-delta` chunk of the UI message stream). Beside them, with the
 * same scripted model, the AI SDK's `streamText` from its call to the first
 * chunk of `textStream` (bench/peers_ai; skipped when not installed).
 *
 * Every sample is a fresh thread (created and subscribed outside the timed
 * part). The figure is the median of SAMPLES after WARMUP samples.
 *
 * Run: `npx tsx bench/first_token.ts` (env SAMPLES=200, WARMUP=30,
 * VARIANTS=memory,libsql-normal,libsql-full, PATHS=inproc,chat). The last
 * line is `RESULT {json}` with the medians and the ratios.
 *
 * @module
 */
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  defineAgent,
  type Gateway,
  type KvStore,
  memoryStore,
  openHost,
  type ProviderEvent,
  type ThreadService,
  type ThreadUpdate,
} from "@floret/engine";
import { libsqlStore } from "@floret/engine/libsql";
import { threadApi } from "@floret/engine/http";

const env = (name: string, fallback: string): string =>
  (globalThis as { process?: { env: Record<string, string | undefined> } }).process?.env[name] ??
    fallback;
const SAMPLES = Number(env("SAMPLES", "200"));
const WARMUP = Number(env("WARMUP", "30"));
const VARIANTS = env("VARIANTS", "memory,libsql-normal,libsql-full").split(",");
const PATHS = env("PATHS", "inproc,chat").split(",");

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
};
const p99 = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))];
};

/** The model: answers every request with "Hello there." in three deltas, at once. */
function timedGateway(): { gateway: Gateway; lastGatewayMs: () => number } {
  let gatewayMs = 0;
  const gateway: Gateway = {
    info: {
      provider: "bench",
      model: "first-token",
      stateKey: "bench:first-token",
      capabilities: { contextWindowTokens: 128_000 },
    },
    async *stream(): AsyncGenerator<ProviderEvent> {
      const called = performance.now();
      // The gateway's own time to its first delta, measured where it yields it.
      gatewayMs = performance.now() - called;
      yield { type: "text", delta: "Hello" };
      yield { type: "text", delta: " there" };
      yield { type: "text", delta: "." };
      yield { type: "usage", usage: { inputTokens: 1, outputTokens: 3 } };
      yield { type: "finish", reason: "stop" };
    },
  };
  return { gateway, lastGatewayMs: () => gatewayMs };
}

/** Whether a batch carries assistant text. */
function hasText(update: ThreadUpdate): boolean {
  if (update.type !== "batch") return false;
  return update.ops.some((op) =>
    (op.op === "append-text" && op.text.length > 0) ||
    ((op.op === "add" || op.op === "replace") && op.item.kind === "assistant" &&
      (op.item.text ?? "").length > 0)
  );
}

function openStore(variant: string): { store: KvStore; cleanup(): void } {
  if (variant === "memory") return { store: memoryStore(), cleanup: () => {} };
  const dir = mkdtempSync(join(tmpdir(), "floret-first-token-"));
  const synchronous = variant === "libsql-full" ? "full" : "normal";
  return {
    store: libsqlStore({ url: `file:${join(dir, "bench.db")}`, synchronous }),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** One in-process sample: ms from `send` to the first text at the subscriber, minus the gateway's. */
async function inProcessSample(
  threads: ThreadService,
  n: number,
  gatewayMs: () => number,
): Promise<number> {
  const { threadId } = await threads.create({ requestKey: `create-${n}` });
  const controller = new AbortController();
  const updates = threads.subscribe(threadId, { signal: controller.signal })
    [Symbol.asyncIterator]();
  const started = performance.now();
  const sent = threads.send({ threadId, requestKey: `send-${n}`, input: { text: "Say hello." } });
  let arrived = 0;
  for (;;) {
    const next = await updates.next();
    if (next.done) throw new Error("subscription ended before any text");
    if (hasText(next.value)) {
      arrived = performance.now();
      break;
    }
  }
  await sent;
  controller.abort();
  await threads.waitForIdle(threadId);
  return arrived - started - gatewayMs();
}

/** One chat-route sample: ms from the POST to the first `text-delta` chunk, minus the gateway's. */
async function chatSample(
  app: { fetch(request: Request): Response | Promise<Response> },
  threads: ThreadService,
  n: number,
  gatewayMs: () => number,
): Promise<number> {
  const { threadId } = await threads.create({ requestKey: `chat-create-${n}` });
  const body = JSON.stringify({
    id: threadId,
    trigger: "submit-message",
    messages: [{ id: `m-${n}`, role: "user", parts: [{ type: "text", text: "Say hello." }] }],
  });
  const started = performance.now();
  const response = await app.fetch(
    new Request(`http://127.0.0.1/threads/${threadId}/chat`, {
      method: "POST",
      headers: { "content-type": "application/json", "idempotency-key": `chat-${n}` },
      body,
    }),
  );
  if (!response.ok || !response.body) throw new Error(`chat answered ${response.status}`);
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  let arrived = 0;
  while (!arrived) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`chat stream ended before a text delta: ${text.slice(0, 400)}`);
    text += value;
    if (text.includes('"type":"text-delta"')) arrived = performance.now();
  }
  // Read the rest so the turn ends before the next sample.
  while (!(await reader.read()).done);
  await threads.waitForIdle(threadId);
  return arrived - started - gatewayMs();
}

// The AI SDK lives in bench/peers_ai (its own install: ai@7 declares Node >= 22,
// and the repository's own install stays clean on Node 20).
type AiModule = {
  streamText(options: { model: unknown; prompt: string }): { textStream: AsyncIterable<string> };
  simulateReadableStream(options: {
    chunks: unknown[];
    initialDelayInMs: null;
    chunkDelayInMs: null;
  }): ReadableStream<unknown>;
};
type AiTestModule = { MockLanguageModelV4: new (options: unknown) => unknown };

/** Imports `ai` and `ai/test` from bench/peers_ai. */
export async function loadAiSdk(): Promise<{ ai: AiModule; test: AiTestModule }> {
  const require = createRequire(new URL("./peers_ai/package.json", import.meta.url));
  const ai = await import(pathToFileURL(require.resolve("ai")).href) as AiModule;
  const test = await import(pathToFileURL(require.resolve("ai/test")).href) as AiTestModule;
  return { ai, test };
}

/** The AI SDK's streamText with an equally instant model, call to first textStream chunk. */
async function aiSdkSamples(): Promise<number[] | string> {
  let ai: AiModule;
  let test: AiTestModule;
  try {
    ({ ai, test } = await loadAiSdk());
  } catch (error) {
    return `AI SDK not installed (cd bench/peers_ai && npm install): ${
      String(error).slice(0, 120)
    }`;
  }
  const { simulateReadableStream, streamText } = ai;
  const samples: number[] = [];
  for (let i = 0; i < WARMUP + SAMPLES; i++) {
    let gatewayMs = 0;
    const model = new test.MockLanguageModelV4({
      doStream: () => {
        const called = performance.now();
        const stream = simulateReadableStream({
          initialDelayInMs: null,
          chunkDelayInMs: null,
          chunks: [
            { type: "text-start", id: "t" },
            { type: "text-delta", id: "t", delta: "Hello" },
            { type: "text-delta", id: "t", delta: " there" },
            { type: "text-delta", id: "t", delta: "." },
            { type: "text-end", id: "t" },
            {
              type: "finish",
              finishReason: { unified: "stop", raw: "stop" },
              usage: {
                inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
                outputTokens: { total: 3, text: 3, reasoning: 0 },
              },
            },
          ],
        });
        gatewayMs = performance.now() - called;
        return Promise.resolve({ stream });
      },
    });
    const started = performance.now();
    const result = streamText({ model, prompt: "Say hello." });
    const iterator = result.textStream[Symbol.asyncIterator]();
    await iterator.next();
    const arrived = performance.now();
    while (!(await iterator.next()).done);
    if (i >= WARMUP) samples.push(arrived - started - gatewayMs);
  }
  return samples;
}

const results: Record<string, { medianUs: number; p99Us: number }> = {};
for (const variant of VARIANTS) {
  for (const path of PATHS) {
    const { store, cleanup } = openStore(variant);
    const { gateway, lastGatewayMs } = timedGateway();
    const host = await openHost({ store });
    const threads = host.threads({
      agent: defineAgent({ id: "first-token", systemPrompt: "Be brief.", gateway, tools: [] }),
    });
    const app = threadApi(threads, { authorize: () => true });
    const samples: number[] = [];
    for (let i = 0; i < WARMUP + SAMPLES; i++) {
      const ms = path === "chat"
        ? await chatSample(app, threads, i, lastGatewayMs)
        : await inProcessSample(threads, i, lastGatewayMs);
      if (i >= WARMUP) samples.push(ms);
    }
    await host.shutdown();
    await store.close();
    cleanup();
    const key = `floret:${variant}:${path}`;
    results[key] = { medianUs: median(samples) * 1000, p99Us: p99(samples) * 1000 };
    console.log(
      `${key.padEnd(32)} median ${results[key].medianUs.toFixed(0)} us, p99 ${
        results[key].p99Us.toFixed(0)
      } us`,
    );
  }
}
const aiSdk = await aiSdkSamples();
const ratios: Record<string, number> = {};
if (typeof aiSdk === "string") {
  console.log(`ai-sdk: ${aiSdk}`);
} else {
  results["ai-sdk:streamText"] = { medianUs: median(aiSdk) * 1000, p99Us: p99(aiSdk) * 1000 };
  console.log(
    `${"ai-sdk:streamText".padEnd(32)} median ${
      results["ai-sdk:streamText"].medianUs.toFixed(0)
    } us`,
  );
  for (const [key, value] of Object.entries(results)) {
    if (key.startsWith("floret:")) {
      ratios[key] = value.medianUs / results["ai-sdk:streamText"].medianUs;
    }
  }
}
const runtime = "Deno" in globalThis ? "deno" : "Bun" in globalThis ? "bun" : "node";
console.log(
  `RESULT ${
    JSON.stringify({
      bench: "first_token",
      runtime,
      samples: SAMPLES,
      results,
      ratiosToAiSdk: ratios,
    })
  }`,
);
