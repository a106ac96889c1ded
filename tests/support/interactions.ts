/**
 * Shared pieces of the interaction tests: a write tool that may need
 * approval, message filters, and a memory store two hosts can share.
 */
import { z } from "zod";
import {
  defineAgent,
  defineTool,
  type Host,
  isFloretError,
  type KvStore,
  type LocalThreadService,
  openHost,
  type ThreadService,
  type ThreadView,
  type ToolDefinition,
} from "@floret/engine";
import { type ScriptedGateway, scriptedGateway, type ScriptStep } from "@floret/engine/testing";
import { deferred, engine, FAST_RETRY, type TestEngine } from "./engine.ts";

/** Matches a FloretError with this code. */
export const isCode = (code: string) => (error: unknown): boolean =>
  isFloretError(error) && error.code === code;

/** The tool parts of a view's items. */
export const tools = (view: ThreadView): NonNullable<ThreadView["items"][number]["tool"]>[] =>
  view.items.filter((item) => item.kind === "tool").map((item) => item.tool!);

/** The tool messages of a request. */
export const toolMessages = (messages: { role: string }[]) =>
  messages.filter((m) => m.role === "tool") as { role: "tool"; output: string; name: string }[];

/** The texts of a request's user messages. */
export const userTexts = (messages: { role: string }[]): string[] =>
  messages.filter((m) => m.role === "user").map((m) => (m as unknown as { text: string }).text);

/** A `write` tool that records its lines; by default every call needs approval. */
export function writeTool(ran: string[], permission: "ask" | "allow" = "ask"): ToolDefinition {
  return defineTool({
    name: "write",
    description: "Write a line",
    effect: "write",
    input: z.object({ line: z.string() }),
    permission,
    execute: ({ line }) => {
      ran.push(line);
      return `wrote ${line}`;
    },
  });
}

/** A script step in which the model calls `write` once per line, all in one response. */
export const writeCalls = (...lines: string[]): ScriptStep => ({
  toolCalls: lines.map((line) => ({ name: "write", arguments: { line } })),
});

/** A script step in which the model asks the user `questions` (the built-in `ask_user`). */
export const askUser = (
  questions: { id: string; prompt: string; options?: string[]; secret?: boolean }[],
): ScriptStep => ({ toolCalls: [{ name: "ask_user", arguments: { questions } }] });

/** A script step in which the model calls `write` once, under a call id the test names. */
/** The one-question script step (`city`, options Oslo/Rome) the interaction tests ask with. */
export const askCity: ScriptStep = askUser([{
  id: "city",
  prompt: "Which city?",
  options: ["Oslo", "Rome"],
}]);

export const writeCall = (line: string, callId: string): ScriptStep => ({
  toolCalls: [{ name: "write", arguments: { line }, callId }],
});

/** How a test opens its engine: the in-process one, or one wrapped for another transport. */
type OpenEngine<E extends TestEngine> = (
  steps: ScriptStep[],
  options: { tools: ToolDefinition[] },
) => Promise<E>;

/**
 * An engine (opened by `open`, the in-process one by default) whose only tool
 * is an approval-gated `write`; `ran` records the lines it wrote.
 */
export async function writeEngine<E extends TestEngine = TestEngine>(
  steps: ScriptStep[],
  open: OpenEngine<E> = engine as OpenEngine<E>,
): Promise<{ e: E; ran: string[] }> {
  const ran: string[] = [];
  return { e: await open(steps, { tools: [writeTool(ran)] }), ran };
}

/**
 * A tool that signals `started`, then holds until `gate` resolves, so a test
 * can act while a call is in flight. `aborted()` tells whether the call's
 * signal was aborted when the gate opened.
 */
export function heldTool(
  options: { name: string; output: string; effect?: "read" | "write"; permission?: "ask" },
): {
  tool: ToolDefinition;
  gate: ReturnType<typeof deferred>;
  started: ReturnType<typeof deferred>;
  aborted: () => boolean;
} {
  const gate = deferred();
  const started = deferred();
  let aborted = false;
  const tool = defineTool({
    name: options.name,
    description: options.name,
    ...(options.effect ? { effect: options.effect } : {}),
    ...(options.permission ? { permission: options.permission } : {}),
    input: z.object({}),
    execute: async (_input, context) => {
      started.resolve();
      await gate.promise;
      aborted = context.signal.aborted;
      return options.output;
    },
  });
  return { tool, gate, started, aborted: () => aborted };
}

/** A thread as the respond helpers address it: a service and a thread id (a TestEngine is one). */
export interface ThreadRef {
  threads: ThreadService;
  threadId: string;
}

/** Approves (or denies) one pending approval under `requestKey`. */
export function decide(
  t: ThreadRef,
  interactionId: string,
  requestKey = "r",
  decision: "approve" | "deny" = "approve",
): Promise<{ view: ThreadView }> {
  return t.threads.respond({ threadId: t.threadId, requestKey, interactionId, decision });
}

/** Answers one pending question set under `requestKey`. */
export function answer(
  t: ThreadRef,
  interactionId: string,
  answers: { questionId: string; value: string }[],
  requestKey = "r",
): Promise<{ view: ThreadView }> {
  return t.threads.respond({ threadId: t.threadId, requestKey, interactionId, answers });
}

/** Sends `text` under `requestKey` without waiting: it starts a turn, or queues behind one. */
export function sendText(
  t: ThreadRef,
  text: string,
  requestKey: string,
): ReturnType<ThreadService["send"]> {
  return t.threads.send({ threadId: t.threadId, requestKey, input: { text } });
}

/** Replaces a queued input's text, provided it still reads `expectedText`. */
export function editQueued(
  e: TestEngine,
  queueId: string,
  text: string,
  expectedText: string,
  requestKey: string,
): ReturnType<LocalThreadService["editQueued"]> {
  return local(e).editQueued({ threadId: e.threadId, requestKey, queueId, text, expectedText });
}

/** Steers the running turn with `text` under `requestKey`. */
export function steer(
  e: TestEngine,
  text: string,
  requestKey: string,
): ReturnType<LocalThreadService["steer"]> {
  return local(e).steer({ threadId: e.threadId, requestKey, text });
}

/** Waits (at most ten seconds) until the thread is idle or waiting. */
export function settle(t: ThreadRef): Promise<ThreadView> {
  return t.threads.waitForIdle(t.threadId, { timeoutMs: 10_000 });
}

/** The engine's in-process service, with turn control (`steer`, `editQueued`). */
export const local = (e: TestEngine): LocalThreadService => e.threads as LocalThreadService;

/** Sends and waits until the thread is idle or waiting. */
export async function sendWait(e: TestEngine, text: string): Promise<ThreadView> {
  await e.threads.send({ threadId: e.threadId, requestKey: `send:${text}`, input: { text } });
  return await e.threads.waitForIdle(e.threadId, { timeoutMs: 10_000 });
}

/** Whether `needle` occurs in `haystack`. */
export function contains(haystack: Uint8Array, needle: Uint8Array): boolean {
  outer: for (let i = 0; i + needle.length <= haystack.length; i++) {
    for (let j = 0; j < needle.length; j++) if (haystack[i + j] !== needle[j]) continue outer;
    return true;
  }
  return false;
}

/** A store whose close() does nothing, so a second host can reopen the same memory. */
export function keepOpen(store: KvStore): KvStore {
  return {
    getMany: (keys) => store.getMany(keys),
    list: (selector, options) => store.list(selector, options),
    commit: (op) => store.commit(op),
    close: async () => {},
  };
}

/**
 * Opens a host on `store` (kept open, so a later host can reopen the same
 * memory, as after a restart) with one agent scripted by `script`: steps for
 * a fresh gateway, or a gateway the test shares across hosts so one script
 * runs on across a restart. `events`, when given, collects every observation
 * event as JSON.
 */
export async function openOn(
  store: KvStore,
  script: ScriptStep[] | ScriptedGateway,
  options: { tools?: ToolDefinition[]; events?: string[] } = {},
): Promise<{ host: Host; threads: LocalThreadService; gateway: ScriptedGateway }> {
  const { tools, events } = options;
  const gateway = Array.isArray(script) ? scriptedGateway(script) : script;
  const host = await openHost({
    store: keepOpen(store),
    ...(events ? { onEvent: (event: unknown) => events.push(JSON.stringify(event)) } : {}),
  });
  const threads = host.threads({
    agent: defineAgent({
      id: "a",
      systemPrompt: "s",
      gateway,
      ...(tools ? { tools } : {}),
      providerRetry: FAST_RETRY,
    }),
  });
  return { host, threads, gateway };
}
