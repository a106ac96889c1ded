/**
 * `threadClient`: a ThreadService whose every method calls the thread API
 * (http.md). Errors come back as FloretError with the server's code.
 *
 * @module
 */
import {
  type Artifact,
  type ContextFigures,
  FloretError,
  type LocalThreadService,
  type ParentEvent,
  type ThreadItem,
  type ThreadSummary,
  type ThreadUpdate,
  type ThreadView,
} from "@floret/engine";
import { type CallSpec, jsonOf, send, type Transport } from "./client_transport.ts";
import { RemoteUpdates, SubscribeGate } from "./client_updates.ts";

/** Options of {@link threadClient}. */
export interface ThreadClientOptions {
  /** Where the API is, including any base path (`https://host/api`). */
  baseUrl: string;
  /** Defaults to the global fetch; pass `app.fetch` to call an app in-process. */
  fetch?: ((request: Request) => Response | Promise<Response>) | undefined;
  /** Added to every request (for tokens); a function is called per request. */
  headers?:
    | Record<string, string>
    | (() => Record<string, string> | Promise<Record<string, string>>)
    | undefined;
}

/**
 * A ThreadService over HTTP, with the turn control of the in-process
 * service (`steer`, `editQueued`) too, so code written against
 * `host.threads()` runs against a remote host unchanged (those two need an
 * app built with `turnControl: true`; elsewhere they fail `not_found`).
 *
 * @param options `baseUrl`, and optionally `fetch` and `headers`
 * @returns the service
 * @throws {FloretError} `invalid_input` for a base URL that is not an http(s) URL
 * @example
 * ```ts
 * import { threadClient } from "@floret/engine/http";
 *
 * const threads = threadClient({
 *   baseUrl: "http://127.0.0.1:8000/api",
 *   headers: () => ({ authorization: "Bearer secret" }),
 * });
 * console.log(typeof threads.send); // "function"
 * ```
 */
export function threadClient(options: ThreadClientOptions): LocalThreadService {
  const transport = transportOf(options);
  const gate = new SubscribeGate();
  const call = (spec: CallSpec): Promise<Response> => send(transport, spec);
  const callJson = async <T>(spec: CallSpec): Promise<T> => await jsonOf<T>(await call(spec));
  /** A thread's path, after any subscription still connecting to it has registered. */
  const thread = async (threadId: unknown, rest = ""): Promise<string> => {
    const id = threadPath(threadId);
    await gate.wait(threadId as string);
    return `/threads/${id}${rest}`;
  };
  const input = (value: unknown): Record<string, unknown> => {
    if (typeof value !== "object" || value === null) {
      throw new FloretError("invalid_input", "The input must be an object");
    }
    return value as Record<string, unknown>;
  };
  const part = (value: unknown): string => encodeURIComponent(String(value));

  return {
    create: async (raw) => {
      const { requestKey, title } = input(raw);
      return await callJson({ method: "POST", path: "/threads", requestKey, body: { title } });
    },
    send: async (raw) => {
      const { threadId, requestKey, input: userInput, supplementalContext, labels } = input(raw);
      return await callJson({
        method: "POST",
        path: await thread(threadId, "/messages"),
        requestKey,
        body: { input: userInput, supplementalContext, labels },
      });
    },
    respond: async (raw) => {
      const { threadId, requestKey, interactionId, decision, answers } = input(raw);
      return await callJson({
        method: "POST",
        path: await thread(threadId, `/interactions/${part(interactionId)}`),
        requestKey,
        body: { decision, answers },
      });
    },
    cancel: async (raw) => {
      const { threadId, requestKey, mode, includeDescendants } = input(raw);
      return await callJson({
        method: "POST",
        path: await thread(threadId, "/cancel"),
        requestKey,
        body: { mode, includeDescendants },
      });
    },
    retry: async (raw) => {
      const { threadId, requestKey, turnId } = input(raw);
      return await callJson({
        method: "POST",
        path: await thread(threadId, "/retry"),
        requestKey,
        body: { turnId },
      });
    },
    fork: async (raw) => {
      const { threadId, requestKey, atItemId } = input(raw);
      return await callJson({
        method: "POST",
        path: await thread(threadId, "/fork"),
        requestKey,
        body: { atItemId },
      });
    },
    delete: async (raw) => {
      const { threadId, requestKey } = input(raw);
      await call({ method: "DELETE", path: await thread(threadId), requestKey });
    },
    setTitle: async (raw) => {
      const { threadId, requestKey, title } = input(raw);
      return await callJson({
        method: "PATCH",
        path: await thread(threadId),
        requestKey,
        body: { title },
      });
    },
    view: async (threadId) =>
      await callJson<ThreadView>({ method: "GET", path: await thread(threadId) }),
    list: async (options) =>
      await callJson<{ threads: ThreadSummary[]; cursor?: string }>({
        method: "GET",
        path: "/threads",
        query: queryOf(options, ["limit", "cursor", "parentThreadId"]),
      }),
    history: async (threadId, options) =>
      await callJson<{ items: ThreadItem[]; before?: string; hasMore: boolean }>({
        method: "GET",
        path: await thread(threadId, "/history"),
        query: queryOf(options, ["limit", "before"]),
      }),
    subscribe: (threadId, options) => {
      if (typeof threadId !== "string") throw new FloretError("thread_not_found", "No such thread");
      checkSignalOptions(options);
      let id: string;
      try {
        id = threadPath(threadId);
      } catch (error) {
        // As in-process: the id is checked when the first update is read.
        const failed = Promise.reject(error);
        failed.catch(() => {});
        return { [Symbol.asyncIterator]: () => ({ next: () => failed }) };
      }
      const updates = new RemoteUpdates(
        (signal) => call({ method: "GET", path: `/threads/${id}/events`, signal }),
        threadId,
        gate,
        options?.signal,
      );
      return updates as AsyncIterable<ThreadUpdate>;
    },
    promoteQueued: async (raw) => {
      const { threadId, requestKey, queueId } = input(raw);
      return await callJson({
        method: "POST",
        path: await thread(threadId, `/queue/${part(queueId)}/promote`),
        requestKey,
      });
    },
    deleteQueued: async (raw) => {
      const { threadId, requestKey, queueId, expectedText } = input(raw);
      return await callJson({
        method: "DELETE",
        path: await thread(threadId, `/queue/${part(queueId)}`),
        requestKey,
        body: expectedText === undefined ? undefined : { expectedText },
      });
    },
    editQueued: async (raw) => {
      const { threadId, requestKey, queueId, text, expectedText, attachments } = input(raw);
      return await callJson({
        method: "PATCH",
        path: await thread(threadId, `/queue/${part(queueId)}`),
        requestKey,
        body: { text, expectedText, attachments },
      });
    },
    steerQueued: async (raw) => {
      const { threadId, requestKey, queueId, expectedText } = input(raw);
      return await callJson({
        method: "POST",
        path: await thread(threadId, `/queue/${part(queueId)}/steer`),
        requestKey,
        body: { expectedText },
      });
    },
    setGoal: async (raw) => {
      const { threadId, requestKey, text } = input(raw);
      return await callJson({
        method: "PUT",
        path: await thread(threadId, "/goal"),
        requestKey,
        body: { text },
      });
    },
    submitGoal: async (raw) => {
      const { threadId, requestKey, text } = input(raw);
      return await callJson({
        method: "PUT",
        path: await thread(threadId, "/goal"),
        requestKey,
        body: { text, submit: true },
      });
    },
    deleteGoal: async (raw) => {
      const { threadId, requestKey } = input(raw);
      return await callJson({
        method: "DELETE",
        path: await thread(threadId, "/goal"),
        requestKey,
      });
    },
    listParentEvents: async (threadId, options) =>
      await callJson<{ events: ParentEvent[]; cursor?: string }>({
        method: "GET",
        path: await thread(threadId, "/parent-events"),
        query: queryOf(options, ["limit", "cursor"]),
      }),
    steer: async (raw) => {
      const { threadId, requestKey, text } = input(raw);
      return await callJson({
        method: "POST",
        path: await thread(threadId, "/steer"),
        requestKey,
        body: { text },
      });
    },
    compact: async (raw) => {
      const { threadId, requestKey, continueGoal } = input(raw);
      return await callJson({
        method: "POST",
        path: await thread(threadId, "/compact"),
        requestKey,
        body: continueGoal === undefined ? undefined : { continueGoal },
      });
    },
    context: async (threadId) =>
      await callJson<ContextFigures>({ method: "GET", path: await thread(threadId, "/context") }),
    artifact: async (threadId, artifactId) =>
      await callJson<Artifact>({
        method: "GET",
        path: await thread(threadId, `/artifacts/${part(artifactId)}`),
      }),
    waitForIdle: async (threadId, options) => {
      options?.signal?.throwIfAborted();
      return await callJson<ThreadView>({
        method: "GET",
        path: await thread(threadId, "/idle"),
        query: queryOf(options, ["timeoutMs"]),
        signal: options?.signal,
      });
    },
  };
}

function transportOf(options: ThreadClientOptions): Transport {
  if (typeof options !== "object" || options === null || typeof options.baseUrl !== "string") {
    throw new FloretError("invalid_input", "threadClient needs a baseUrl");
  }
  let url: URL;
  try {
    url = new URL(options.baseUrl);
  } catch (error) {
    throw new FloretError("invalid_input", `Not a URL: ${options.baseUrl}`, { cause: error });
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new FloretError("invalid_input", `The base URL must be http or https: ${url.protocol}`);
  }
  if (options.fetch !== undefined && typeof options.fetch !== "function") {
    throw new FloretError("invalid_input", "fetch must be a function");
  }
  const fetch = options.fetch ?? ((request: Request) => globalThis.fetch(request));
  return { baseUrl: options.baseUrl.replace(/\/+$/, ""), fetch, headers: options.headers };
}

/**
 * A thread id as a path segment. Ids that cannot name a thread (not a string,
 * empty, or a dot segment a URL would collapse) fail here as the service would.
 */
function threadPath(threadId: unknown): string {
  if (typeof threadId !== "string" || threadId === "" || threadId === "." || threadId === "..") {
    throw new FloretError("thread_not_found", "No such thread");
  }
  return encodeURIComponent(threadId);
}

/**
 * Refuses the options `subscribe` refuses in-process, as it does (at once):
 * `null` or a non-object, or a `signal` that is not an AbortSignal. (Taken
 * as they came, `null` subscribed and a wrong signal threw a TypeError.)
 */
function checkSignalOptions(options: unknown): void {
  if (options === undefined) return;
  if (typeof options !== "object" || options === null) {
    throw new FloretError("invalid_input", "Options must be an object");
  }
  const signal = (options as { signal?: unknown }).signal;
  if (signal !== undefined && !(signal instanceof AbortSignal)) {
    throw new FloretError("invalid_input", "signal must be an AbortSignal");
  }
}

function queryOf(
  options: unknown,
  names: string[],
): Record<string, string | number | undefined> | undefined {
  if (options === undefined) return undefined;
  if (typeof options !== "object" || options === null) {
    throw new FloretError("invalid_input", "Options must be an object");
  }
  const record = options as Record<string, unknown>;
  const query: Record<string, string | number | undefined> = {};
  for (const name of names) {
    const value = record[name];
    if (value !== undefined) query[name] = typeof value === "number" ? value : String(value);
  }
  return query;
}
