/**
 * Shared pieces of the store audit (tests/audit_store_*.test.ts): one
 * scripted conversation that touches every kind of journal entry, a host
 * opener on a shared store, and the comparisons a restart must pass.
 * Public API only.
 */
import assert from "node:assert/strict";
import { z } from "zod";
import {
  defineAgent,
  defineTool,
  type Host,
  type KvStore,
  type LocalThreadService,
  type ObservationEvent,
  openHost,
  type ProviderRequest,
  type ThreadService,
  type ThreadView,
} from "@floret/engine";
import { scriptedGateway, type ScriptStep } from "@floret/engine/testing";

/** The agent's system prompt; a request that starts with another one is a summary request. */
export const SYSTEM = "You are the store audit agent.";

/**
 * The store with a `close` that leaves it open, so several hosts can use it in
 * turn. A spread, not a wrapper of the four methods: it keeps every other own
 * property of the store, so a host uses the store exactly as it would use the
 * store itself (the memory store's own commit path included).
 */
export function keepOpen(store: KvStore): KvStore {
  return { ...store, close: async () => {} };
}

/** Key parts as JSON can show them (bigints and bytes tagged). */
function keyText(key: readonly unknown[]): string {
  return JSON.stringify(
    key,
    (_k, v) =>
      typeof v === "bigint"
        ? `bigint:${v}`
        : v instanceof Uint8Array
        ? `bytes:${[...v].join(",")}`
        : v,
  );
}

/** Every stored row (the whole keyspace through the SPI) as key text → value text. */
export async function storedRows(store: KvStore): Promise<Map<string, string>> {
  const rows = new Map<string, string>();
  const decoder = new TextDecoder("utf-8", { fatal: true });
  for (const entry of await store.list({ prefix: [] })) {
    rows.set(keyText(entry.key), decoder.decode(entry.value));
  }
  return rows;
}

/** Lines the `write` tool wrote (a side effect, so it needs a dispatch marker). */
export interface Tools {
  written: string[];
}

/** The audit's tools: add (none), info (structured + activity), write (ask, effect write). */
export function auditTools(state: Tools) {
  const add = defineTool({
    name: "add",
    description: "Add two numbers",
    input: z.object({ a: z.number(), b: z.number() }),
    execute: ({ a, b }) => String(a + b),
  });
  const info = defineTool({
    name: "info",
    description: "Structured facts",
    effect: "read",
    input: z.object({ topic: z.string(), typed: z.boolean().optional() }),
    execute: ({ topic, typed }) => ({
      output: `facts about ${topic}`,
      structured: typed
        ? {
          topic,
          when: new Date("2026-01-02T03:04:05.000Z"),
          tags: new Set(["a", "b"]),
          big: 12345678901234567890n,
          nested: { list: [1, { deep: topic }] },
        }
        : { topic, count: topic.length, nested: { list: [1, 2, { deep: topic }] } },
      activity: { label: `looked up ${topic}`, rows: [{ kind: "text", text: `row ${topic}` }] },
    }),
  });
  const write = defineTool({
    name: "write",
    description: "Write a line",
    effect: "write",
    permission: "ask",
    input: z.object({ line: z.string() }),
    execute: ({ line }) => {
      state.written.push(line);
      return `wrote ${line}`;
    },
  });
  return [add, info, write];
}

/**
 * A gateway that answers summary requests with a scripted summary and plays
 * `plays` (shifted as used) for every other request.
 */
export function playGateway(plays: Play[]) {
  const answer = (request: ProviderRequest): ScriptStep => {
    const first = request.messages[0] as { role: string; text?: string };
    if (first.role === "system" && first.text !== SYSTEM) return { text: "SCRIPTED SUMMARY" };
    const next = plays.shift() ?? { text: "default answer" };
    return typeof next === "function" ? next(request) : next;
  };
  return scriptedGateway(Array.from({ length: 5000 }, () => answer));
}

/** A scripted answer, or one made from the request it answers. */
export type Play = ScriptStep | ((request: ProviderRequest) => ScriptStep);

/** The child agent the audit agent may spawn: it answers every task with one text. */
export function helperAgent() {
  const answer = (request: ProviderRequest): ScriptStep => {
    const users = request.messages.filter((m) => m.role === "user");
    return { text: `helper did: ${(users.at(-1) as { text: string } | undefined)?.text}` };
  };
  return defineAgent({
    id: "helper",
    systemPrompt: "You help.",
    gateway: scriptedGateway(Array.from({ length: 500 }, () => answer)),
  });
}

/** The thread ids the `spawn_agent` results of a request name. */
function spawned(request: ProviderRequest): string[] {
  return request.messages.flatMap((m) =>
    m.role === "tool" && m.name === "spawn_agent" ? [JSON.parse(m.output).threadId as string] : []
  );
}

/** A host on `store` (kept open) with the audit agent. */
export interface AuditHost {
  host: Host;
  threads: ThreadService;
  local: LocalThreadService;
  /** The agent's gateway: every request it received. */
  gateway: ReturnType<typeof playGateway>;
}

/** Opens a host with the audit agent on `store`; `plays` feeds its gateway. */
export async function openAudit(
  store: KvStore,
  plays: Play[],
  state: Tools = { written: [] },
  onEvent?: (event: ObservationEvent) => void,
): Promise<AuditHost> {
  const host = await openHost(
    onEvent ? { store: keepOpen(store), onEvent } : { store: keepOpen(store) },
  );
  const gateway = playGateway(plays);
  const threads = host.threads({
    agent: defineAgent({
      id: "auditor",
      systemPrompt: SYSTEM,
      gateway,
      tools: auditTools(state),
      subagents: [helperAgent()],
      providerRetry: { delaysMs: [1, 1, 1, 1] },
      // Small enough that a long input makes manual compaction compact.
      context: { windowTokens: 6000 },
    }),
  });
  return { host, threads, local: threads as LocalThreadService, gateway };
}

/** Waits until the thread is idle or waiting. */
export const idle = (threads: ThreadService, threadId: string): Promise<ThreadView> =>
  threads.waitForIdle(threadId, { timeoutMs: 10_000 });

/** Waits until an item streams live after the user item with this text. */
export async function liveAfter(threads: ThreadService, threadId: string, text: string) {
  for (;;) {
    const items = (await threads.view(threadId)).items;
    const at = items.findLastIndex((item) => item.kind === "user" && item.text === text);
    if (at >= 0 && items.slice(at + 1).some((item) => item.live)) return;
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

/**
 * One round of every kind of turn and command the journal records, on one
 * thread: tools (plain, structured with and without type notes, activity),
 * approvals approved and denied, a queued hand-over, a question, todos, a
 * manual compaction with a scripted summary, a steer, a cancel, a retry, a
 * failure and a title. Adds about 30 items.
 */
export async function round(a: AuditHost, plays: Play[], threadId: string, r: string) {
  const { threads } = a;
  let n = 0;
  const key = (what: string) => `${threadId}:${r}:${what}:${++n}`;
  const send = async (text: string, steps: Play[]) => {
    plays.push(...steps);
    await threads.send({ threadId, requestKey: key("send"), input: { text } });
    return await idle(threads, threadId);
  };
  await send(`tools ${r}`, [
    {
      toolCalls: [
        { name: "add", arguments: { a: 1, b: 2 } },
        { name: "info", arguments: { topic: `plain ${r}` } },
        { name: "info", arguments: { topic: `typed ${r}`, typed: true } },
      ],
    },
    {
      toolCalls: [{
        name: "todo_write",
        arguments: {
          todos: [{ text: `first ${r}`, status: "done" }, {
            id: "t2",
            text: `second ${r}`,
            status: "in_progress",
          }],
        },
      }],
    },
    { text: `sum ${r}`, reasoning: `thinking ${r}` },
  ]);
  await send(`spawn ${r}`, [
    { toolCalls: [{ name: "spawn_agent", arguments: { agent: "helper", task: `task ${r}` } }] },
    (request) => ({
      toolCalls: [{ name: "wait_agents", arguments: { threadIds: spawned(request).slice(-1) } }],
    }),
    { text: `spawned ${r}` },
  ]);
  for (const decision of ["approve", "deny"] as const) {
    const waiting = await send(`write ${r} ${decision}`, [{
      toolCalls: [{ name: "write", arguments: { line: `${r} ${decision}` } }],
    }]);
    plays.push({ text: `after ${decision}` });
    await threads.respond({
      threadId,
      requestKey: key("respond"),
      interactionId: waiting.pending[0].id,
      decision,
    });
    await idle(threads, threadId);
  }
  const held = await send(`hand ${r}`, [{
    toolCalls: [{ name: "write", arguments: { line: `hand ${r}` } }],
  }]);
  await threads.send({ threadId, requestKey: key("send"), input: { text: `queued ${r}` } });
  plays.push({ text: `handed ${r}` }, { text: `queued answer ${r}` });
  await threads.respond({
    threadId,
    requestKey: key("respond"),
    interactionId: held.pending[0].id,
    decision: "approve",
  });
  await idle(threads, threadId);
  const asked = await send(`ask ${r}`, [{
    toolCalls: [{
      name: "ask_user",
      arguments: { questions: [{ id: "q", prompt: `Which ${r}?`, options: ["a", "b"] }] },
    }],
  }]);
  plays.push({ text: "thanks" });
  await threads.respond({
    threadId,
    requestKey: key("answer"),
    interactionId: asked.pending[0].id,
    answers: [{ questionId: "q", value: "a" }],
  });
  await idle(threads, threadId);
  await send(`long ${r} ${"words ".repeat(1500)}`, [{ text: `long answer ${r}` }]);
  await threads.compact({ threadId, requestKey: key("compact") });
  plays.push({ hang: true, text: "partial" }, { hang: true, text: "partial again" });
  await threads.send({ threadId, requestKey: key("send"), input: { text: `hang ${r}` } });
  await liveAfter(threads, threadId, `hang ${r}`);
  await a.local.steer({ threadId, requestKey: key("steer"), text: `steer ${r}` });
  await liveAfter(threads, threadId, `steer ${r}`);
  await threads.cancel({ threadId, requestKey: key("cancel") });
  await idle(threads, threadId);
  plays.push({ text: `retried ${r}` });
  await threads.retry({ threadId, requestKey: key("retry") });
  await idle(threads, threadId);
  await threads.setTitle({ threadId, requestKey: key("title"), title: `title ${r}` });
  await send(`fail ${r}`, [{ error: { retry: "never", message: "no" } }]);
}

/**
 * A view with what the contract lets differ between two hosts removed, as a
 * deep copy (structuredClone keeps Map, Set, Date and BigInt in `structured`).
 */
export function durableView(view: ThreadView): Record<string, unknown> {
  const copy = structuredClone(view) as unknown as Record<string, unknown>;
  delete copy.viewVersion;
  delete copy.runProgress;
  return copy;
}

/**
 * Changes every value reachable from `value` in place: strings, numbers and
 * booleans are replaced, arrays, maps and sets grow, dates move. What a
 * careless host might do to objects it got back.
 */
export function scribble(value: unknown, seen = new Set<unknown>()): void {
  if (typeof value !== "object" || value === null || seen.has(value)) return;
  seen.add(value);
  if (value instanceof Date) {
    value.setTime(0);
    return;
  }
  if (value instanceof Map) {
    for (const inner of value.values()) scribble(inner, seen);
    value.set("scribbled", "scribbled");
    return;
  }
  if (value instanceof Set) {
    for (const inner of value) scribble(inner, seen);
    value.add("scribbled");
    return;
  }
  const record = value as Record<string | number, unknown>;
  for (const key of Object.keys(record)) {
    const inner = record[key];
    if (typeof inner === "string") record[key] = `scribbled ${inner}`;
    else if (typeof inner === "number") record[key] = inner + 1000;
    else if (typeof inner === "boolean") record[key] = !inner;
    else if (typeof inner === "bigint") record[key] = inner + 1n;
    else scribble(inner, seen);
  }
  if (Array.isArray(value)) value.push("scribbled");
}

/**
 * Asserts `actual` deep-equals `expected`, naming the first path where they
 * differ (the whole-object diff of a long thread is unreadable).
 */
export function sameAt(actual: unknown, expected: unknown, what: string, path = "$"): void {
  if (Object.is(actual, expected)) return;
  const kind = (v: unknown) =>
    v === null
      ? "null"
      : Array.isArray(v)
      ? "array"
      : v instanceof Map
      ? "map"
      : v instanceof Set
      ? "set"
      : v instanceof Date
      ? "date"
      : typeof v;
  const [ka, ke] = [kind(actual), kind(expected)];
  if (ka !== ke || (ka !== "object" && ka !== "array")) {
    assert.deepStrictEqual(actual, expected, `${what}: differs at ${path}`);
    return;
  }
  const a = actual as Record<string, unknown>;
  const e = expected as Record<string, unknown>;
  const keys = new Set([...Object.keys(a), ...Object.keys(e)]);
  for (const key of keys) {
    if (!(key in a) || !(key in e)) {
      assert.fail(
        `${what}: ${path}.${key} is ${key in a ? "extra" : "missing"} (${
          JSON.stringify(a[key] ?? e[key])?.slice(0, 200)
        })`,
      );
    }
    sameAt(a[key], e[key], what, `${path}.${key}`);
  }
}
