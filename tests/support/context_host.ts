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
import { contextGateway } from "./context_gateway.ts";

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
