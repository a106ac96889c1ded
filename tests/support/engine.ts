/**
 * Shared set-up for engine tests: a host on a memory store with a scripted
 * gateway, through the public API only.
 */
import { z } from "zod";
import {
  type AgentConfig,
  defineAgent,
  defineTool,
  type Host,
  type KvStore,
  memoryStore,
  openHost,
  type ThreadService,
  type ThreadView,
  type ToolDefinition,
} from "@floret/engine";
import { type ScriptedGateway, scriptedGateway, type ScriptStep } from "@floret/engine/testing";

/** Retries without waiting, so tests stay fast. */
export const FAST_RETRY = { delaysMs: [1, 1, 1, 1] };

/** An `add` tool that counts its calls. */
export function addTool(calls: { count: number } = { count: 0 }): ToolDefinition {
  return defineTool({
    name: "add",
    description: "Add two numbers",
    input: z.object({ a: z.number(), b: z.number() }),
    execute: ({ a, b }) => {
      calls.count++;
      return String(a + b);
    },
  });
}

/** A running test host. */
export interface TestEngine {
  host: Host;
  threads: ThreadService;
  gateway: ScriptedGateway;
  store: KvStore;
  threadId: string;
}

/** Opens a host with one thread already created. */
export async function engine(
  steps: ScriptStep[],
  options: { tools?: ToolDefinition[]; store?: KvStore; agent?: Partial<AgentConfig> } = {},
): Promise<TestEngine> {
  const store = options.store ?? memoryStore();
  const gateway = scriptedGateway(steps);
  const host = await openHost({ store });
  const threads = host.threads({
    agent: defineAgent({
      id: "test-agent",
      systemPrompt: "You are a test agent.",
      gateway,
      tools: options.tools ?? [addTool()],
      providerRetry: FAST_RETRY,
      ...options.agent,
    }),
  });
  const { threadId } = await threads.create({ requestKey: "create" });
  return { host, threads, gateway, store, threadId };
}

/** Sends a message and waits until the thread is idle. */
export async function sendAndWait(
  e: TestEngine,
  text: string,
  requestKey = `send:${text}`,
): Promise<ThreadView> {
  await e.threads.send({ threadId: e.threadId, requestKey, input: { text } });
  return await e.threads.waitForIdle(e.threadId, { timeoutMs: 10_000 });
}

/** The last turn's outcome and failure code. */
export function lastTurn(view: ThreadView): { outcome?: string; code?: string } {
  const turn = view.turns.at(-1);
  return { outcome: turn?.outcome, code: turn?.failure?.code };
}

/** Waits until `predicate` holds for the thread's view (polling the public API). */
export async function until(
  e: TestEngine,
  predicate: (view: ThreadView) => boolean,
  timeoutMs = 5_000,
): Promise<ThreadView> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const view = await e.threads.view(e.threadId);
    if (predicate(view)) return view;
    if (Date.now() > deadline) {
      throw new Error(`Condition not met; last view: ${JSON.stringify(view)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** A promise with its resolver (Node 20 has no Promise.withResolvers). */
export function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}
