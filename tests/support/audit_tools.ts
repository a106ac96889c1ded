/**
 * Helpers of the round-11 tool audits (tests/audit_lifecycle_tools*.test.ts):
 * handlers held open by the test that keep their context without reading its
 * signal, a tool that answers at once, and a host with one scripted agent.
 */
import { z } from "zod";
import {
  defineAgent,
  defineTool,
  memoryStore,
  openHost,
  type ThreadService,
  type ThreadView,
  type ToolContext,
} from "@floret/engine";
import { scriptedGateway, type ScriptStep } from "@floret/engine/testing";

/** How long one audit test may take before its watchdog fails it. */
export const WATCHDOG_MS = 20_000;

/** A handler held open by the test; it never reads its context unless told to. */
export interface Held {
  /** Each call's context, in call order. */
  contexts: ToolContext[];
  /** Resolves once the expected number of calls have started. */
  started: Promise<void>;
  /** Answers every call waiting now with `output`. */
  release: (output: string) => void;
  /** What the handler returns: the output given to the next `release`. */
  wait: () => Promise<string>;
}

/**
 * A held handler's state.
 *
 * @param expected how many calls `started` waits for
 */
export function heldCalls(expected = 1): Held {
  const contexts: ToolContext[] = [];
  let startedResolve!: () => void;
  const started = new Promise<void>((r) => (startedResolve = r));
  const waiting: ((output: string) => void)[] = [];
  return {
    contexts,
    started,
    release: (output) => {
      for (const resolve of waiting.splice(0)) resolve(output);
    },
    wait: () =>
      new Promise<string>((resolve) => {
        waiting.push(resolve);
        if (contexts.length >= expected) startedResolve();
      }),
  };
}

/** A tool whose handler keeps its context without touching `signal`. */
export function holdTool(
  held: Held,
  effect: "none" | "write" = "none",
  permission: "allow" | "ask" = "allow",
) {
  return defineTool({
    name: "hold",
    description: "Waits for the test",
    input: z.object({ n: z.number() }),
    effect,
    permission,
    execute: (_input, context) => {
      held.contexts.push(context);
      return held.wait();
    },
  });
}

/** A tool that answers at once and keeps its context (never reading its signal). */
export function quickTool(contexts: ToolContext[]) {
  return defineTool({
    name: "quick",
    description: "Answers at once",
    input: z.object({ n: z.number() }),
    execute: ({ n }, context) => {
      contexts.push(context);
      return `quick ${n}`;
    },
  });
}

/** A memory-store host whose agent plays `steps`, and one thread on it. */
export async function open(steps: ScriptStep[], tools: ReturnType<typeof defineTool>[]) {
  const gateway = scriptedGateway(steps);
  const host = await openHost({ store: memoryStore() });
  const threads = host.threads({
    agent: defineAgent({
      id: "audit-tools",
      systemPrompt: "Audit.",
      gateway,
      tools,
      providerRetry: { delaysMs: [1, 1, 1, 1] },
    }),
  });
  const { threadId } = await threads.create({ requestKey: "create" });
  return { host, threads, threadId, gateway };
}

/** The view's tool items. */
export const toolItems = (view: ThreadView) => view.items.filter((item) => item.kind === "tool");

/** A step that calls the held tool once. */
export const holdCall = (callId = "h1"): ScriptStep => ({
  toolCalls: [{ name: "hold", arguments: { n: 1 }, callId }],
});

/** Sends `key` as the text, under `key`. */
export async function sendGo(threads: ThreadService, threadId: string, key = "go"): Promise<void> {
  await threads.send({ threadId, requestKey: key, input: { text: key } });
}
