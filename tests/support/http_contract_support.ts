// Shared fakes and helpers of the http_contract_*.test.ts files: a recording
// ThreadService, request builders, an SSE reader, a real engine, a loopback server.
import assert from "node:assert/strict";
import {
  defineAgent,
  FloretError,
  memoryStore,
  openHost,
  type ThreadService,
  type ThreadUpdate,
  type ThreadView,
} from "@floret/engine";
import { scriptedGateway, type ScriptStep } from "@floret/engine/testing";
import { type HttpAction } from "@floret/engine/http";

// ------------------------------------------------------------ helpers

/** What authorize was asked: the action, the thread (if any) and the request. */
export type Check = { action: HttpAction; threadId?: string; request: Request };
/** One recorded call of the fake service. */
export type Call = { method: string; args: unknown[] };

/** An authorize that records each check into `seen` and allows it. */
export const allow = (seen: Check[]) => (check: Check) => {
  seen.push(check);
  return true;
};

/** A view with the fields public-api.d.ts lists; the server passes it through untouched. */
export const viewOf = (threadId: string, viewVersion = 3): ThreadView => ({
  threadId,
  status: "idle",
  items: [],
  pending: [],
  queue: [],
  turns: [],
  todos: [],
  viewVersion,
} as unknown as ThreadView);

/** One live subscription of the fake: registered when `subscribe()` is called. */
export class FakeSubscription {
  readonly queue: (ThreadUpdate | "end")[] = [];
  wake: (() => void) | undefined;
  signal: AbortSignal | undefined;
  push(update: ThreadUpdate | "end"): void {
    this.queue.push(update);
    this.wake?.();
  }
}

/**
 * A ThreadService that records every call and answers with fixed shapes, so a
 * test sees exactly what the server passed in and whether it called at all.
 */
export function fakeService(
  overrides: Partial<Record<keyof ThreadService, (...args: never[]) => unknown>> = {},
) {
  const calls: Call[] = [];
  const subscriptions: FakeSubscription[] = [];
  const context = {
    windowTokens: 1000,
    estimateTokens: 10,
    totals: { inputTokens: 1, outputTokens: 2, cacheReadTokens: 0, cacheWriteTokens: 0 },
    compactions: [],
  };
  const base: Record<string, (...args: never[]) => unknown> = {
    create: () => ({ threadId: "t-new", view: viewOf("t-new") }),
    list: () => ({ threads: [], cursor: "next-page" }),
    view: (threadId: string) => viewOf(threadId),
    setTitle: () => ({ view: viewOf("t1") }),
    delete: () => undefined,
    history: () => ({ items: [], before: "item-0", hasMore: true }),
    send: () => ({ threadId: "t1", turnId: "turn-1", queued: false, view: viewOf("t1") }),
    respond: () => ({ view: viewOf("t1") }),
    cancel: () => ({ view: viewOf("t1") }),
    retry: () => ({ turnId: "turn-2", view: viewOf("t1") }),
    fork: () => ({ threadId: "t-fork", view: viewOf("t-fork") }),
    promoteQueued: () => ({ turnId: "turn-3", view: viewOf("t1") }),
    deleteQueued: () => ({ view: viewOf("t1") }),
    compact: () => ({ outcome: "noop", view: viewOf("t1") }),
    context: () => context,
    artifact: () => ({ id: "a1", callId: "call-1", text: "the full output" }),
    waitForIdle: (threadId: string) => viewOf(threadId),
    subscribe: (_threadId: string, options?: { signal?: AbortSignal }) => {
      const subscription = new FakeSubscription();
      subscription.signal = options?.signal;
      subscriptions.push(subscription);
      return (async function* () {
        while (true) {
          const next = subscription.queue.shift();
          if (next === "end") return;
          if (next !== undefined) {
            yield next;
            continue;
          }
          if (subscription.signal?.aborted) return;
          await new Promise<void>((resolve) => {
            subscription.wake = resolve;
            subscription.signal?.addEventListener("abort", () => resolve(), { once: true });
          });
        }
      })();
    },
  };
  const service: Record<string, unknown> = {};
  for (const [name, implementation] of Object.entries({ ...base, ...overrides })) {
    service[name] = (...args: never[]) => {
      calls.push({ method: name, args });
      if (name === "subscribe") return implementation!(...args);
      // Every other method answers with a promise, as the service contract has it; a
      // synchronous throw becomes a rejection.
      try {
        return Promise.resolve(implementation!(...args));
      } catch (error) {
        return Promise.reject(error);
      }
    };
  }
  return { service: service as unknown as ThreadService, calls, subscriptions, context };
}

/** The `{error:{code,message}}` of an error response, asserting its shape. */
export const errorOf = async (response: Response): Promise<{ code: string; message?: string }> => {
  const body = (await response.json()) as { error: { code: string; message?: string } };
  assert.equal(typeof body.error, "object", "error bodies are {error:{code,…}}");
  return body.error;
};

/** A JSON request to the test origin, with an optional Idempotency-Key and headers. */
export const json = (
  method: string,
  url: string,
  body: unknown,
  key?: string,
  extra: Record<string, string> = {},
) =>
  new Request(`http://floret.test${url}`, {
    method,
    headers: {
      "content-type": "application/json",
      ...(key === undefined ? {} : { "idempotency-key": key }),
      ...extra,
    },
    body: JSON.stringify(body),
  });

/** A request to the test origin (GET unless `init` says otherwise). */
export const get = (url: string, init: RequestInit = {}) =>
  new Request(`http://floret.test${url}`, init);

/** Every event of a finished SSE body, in order, comments included as `{comment}`. */
export function parseSse(text: string): { event?: string; data?: string; comment?: string }[] {
  const events: { event?: string; data?: string; comment?: string }[] = [];
  for (const block of text.replace(/\r\n/g, "\n").split("\n\n")) {
    if (block.trim() === "") continue;
    const event: { event?: string; data?: string; comment?: string } = {};
    for (const line of block.split("\n")) {
      if (line.startsWith(":")) event.comment = line.slice(1).trim();
      else if (line.startsWith("event:")) event.event = line.slice(6).trim();
      else if (line.startsWith("data:")) {
        const value = line.slice(5).replace(/^ /, "");
        event.data = event.data === undefined ? value : `${event.data}\n${value}`;
      }
    }
    events.push(event);
  }
  return events;
}

/** A real host over the memory store with one scripted agent, for end-to-end checks. */
export async function realEngine(steps: ScriptStep[] = []) {
  const gateway = scriptedGateway(steps);
  const host = await openHost({ store: memoryStore() });
  const threads = host.threads({
    agent: defineAgent({ id: "contract", systemPrompt: "Be brief.", gateway }),
  });
  return { host, threads, gateway };
}

/** The FloretError code `promise` rejects with; fails if it resolves or throws anything else. */
export async function rejectsWith(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof FloretError, `expected a FloretError, got ${String(error)}`);
    return error.code;
  }
  assert.fail("expected a rejection");
}

// ------------------------------------------------------------ the route table

// ------------------------------------------------------------ chat route

/** An AI SDK chat request body whose last user message has id `lastId` and text `parts`. */
export function chatBody(lastId: string, parts: string[], extra: Record<string, unknown> = {}) {
  return {
    id: "chat-1",
    trigger: "submit-message",
    messageId: undefined,
    messages: [
      { id: "u0", role: "user", parts: [{ type: "text", text: "earlier" }] },
      { id: "a0", role: "assistant", parts: [{ type: "text", text: "earlier answer" }] },
      {
        id: lastId,
        role: "user",
        parts: [...parts.map((text) => ({ type: "text", text })), {
          type: "file",
          mediaType: "text/plain",
          url: "data:,",
        }],
      },
    ],
    ...extra,
  };
}

// ------------------------------------------------------------ over a loopback socket

/** Serves `fetch` on 127.0.0.1 with the runtime's own server, as http.md lists them. */
export async function serveLoopback(
  fetch: (request: Request) => Response | Promise<Response>,
): Promise<{ url: string; close: () => Promise<void> }> {
  const runtime = globalThis as unknown as {
    Deno?: {
      serve: (
        options: { hostname: string; port: number; onListen: () => void },
        handler: typeof fetch,
      ) => { addr: { port: number }; shutdown: () => Promise<void> };
    };
    Bun?: {
      serve: (options: { hostname: string; port: number; fetch: typeof fetch }) => {
        port: number;
        stop: (force: boolean) => Promise<void> | void;
      };
    };
  };
  if (runtime.Deno) {
    const server = runtime.Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen: () => {} },
      fetch,
    );
    return { url: `http://127.0.0.1:${server.addr.port}`, close: () => server.shutdown() };
  }
  if (runtime.Bun) {
    const server = runtime.Bun.serve({ hostname: "127.0.0.1", port: 0, fetch });
    return { url: `http://127.0.0.1:${server.port}`, close: async () => await server.stop(true) };
  }
  const { serve } = await import("@hono/node-server");
  return await new Promise((resolve) => {
    const server = serve({ fetch, hostname: "127.0.0.1", port: 0 }, (info) => {
      resolve({
        url: `http://127.0.0.1:${info.port}`,
        close: () =>
          new Promise<void>((done, fail) => {
            (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
            server.close((error) => (error ? fail(error) : done()));
          }),
      });
    });
  });
}
