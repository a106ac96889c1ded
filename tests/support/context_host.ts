/**
 * A host for context tests: one thread of an agent without tools (the
 * built-in ones off, so sizes are the test's own) on a context gateway, and
 * a `say` that sends and waits.
 */
import {
  defineAgent,
  type KvStore,
  memoryStore,
  type ObservationEvent,
  openHost,
  type TokenCounter,
} from "@floret/engine";
import assert from "node:assert/strict";
import { contextGateway, words } from "./context_gateway.ts";

/** The agent's system prompt, which marks ordinary requests. */
export const CONTEXT_SYSTEM = "You are a careful assistant.";
const FAST = { delaysMs: [1, 1, 1, 1] };

/** Opens the host and creates the thread. */
export async function setup(
  options: {
    windowTokens?: number;
    maxOutputTokens?: number;
    modelMaxOutputTokens?: number;
    systemPrompt?: string;
    store?: KvStore;
    events?: ObservationEvent[];
    tokenCounter?: TokenCounter;
  } = {},
) {
  const systemPrompt = options.systemPrompt ?? CONTEXT_SYSTEM;
  const gateway = contextGateway(systemPrompt);
  const store = options.store ?? memoryStore();
  const host = await openHost({
    store,
    onEvent: options.events ? (event) => options.events!.push(event) : undefined,
  });
  const context: Record<string, number | TokenCounter> = {
    windowTokens: options.windowTokens ?? 8000,
  };
  if (options.tokenCounter) context.tokenCounter = options.tokenCounter;
  if (options.maxOutputTokens !== undefined) context.maxOutputTokens = options.maxOutputTokens;
  if (options.modelMaxOutputTokens !== undefined) {
    context.modelMaxOutputTokens = options.modelMaxOutputTokens;
  }
  const agent = defineAgent({
    id: "ctx",
    systemPrompt,
    gateway,
    tools: [],
    // The sizes below leave no room for the built-in tools' definitions.
    askUser: false,
    todos: false,
    context,
    providerRetry: FAST,
  });
  const threads = host.threads({ agent });
  const { threadId } = await threads.create({ requestKey: "create" });
  let n = 0;
  const say = async (text: string, extra: Record<string, unknown> = {}) => {
    await threads.send({ threadId, requestKey: `send-${++n}`, input: { text }, ...extra });
    return await threads.waitForIdle(threadId, { timeoutMs: 20_000 });
  };
  return { gateway, host, threads, threadId, say, store, agent };
}

/** A thread whose estimate sits between the target (7,200) and the hard limit (7,920). */
export async function fullThread(options: Parameters<typeof setup>[0] = {}) {
  const e = await setup(options);
  // Each "longN " costs 1.5 rough tokens: about 4,500 + 2,925 tokens of answers.
  e.gateway.answers.push({ text: words(3000, "long") }, { text: words(1950, "more") });
  await e.say("HEAD-MARKER first question");
  await e.say("write a lot");
  assert.equal(e.gateway.summaries.length, 0);
  const { estimateTokens } = await e.threads.context(e.threadId);
  assert.ok(estimateTokens >= 7200 && estimateTokens < 7700, `estimate ${estimateTokens}`);
  return e;
}
