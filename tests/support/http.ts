/**
 * Set-up for the HTTP contract tests: an engine behind `threadApi`, with a
 * service that records which methods were reached and an `authorize` that
 * records what it was asked and answers as the test says.
 */
import type { ThreadService } from "@floret/engine";
import { type AuthorizeCheck, threadApi } from "@floret/engine/http";
import type { ScriptStep } from "@floret/engine/testing";
import { engine, type TestEngine } from "./engine.ts";

/** A service proxy that records the name of every method called. */
export function spyService(threads: ThreadService, calls: string[]): ThreadService {
  return new Proxy(threads, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        calls.push(String(name));
        return value.apply(target, args);
      };
    },
  });
}

/** An engine served by threadApi. */
export interface ApiEngine extends TestEngine {
  app: ReturnType<typeof threadApi>;
  /** Service methods reached, in order. */
  calls: string[];
  /** What authorize was asked. */
  checks: AuthorizeCheck[];
  /** What authorize answers next: allow, refuse, or throw. */
  verdict: { value: boolean | "throw" };
  /** Sends a request to the app (a JSON body when `body` is given). */
  call(
    method: string,
    path: string,
    init?: { key?: string; body?: unknown; headers?: Record<string, string>; signal?: AbortSignal },
  ): Promise<Response>;
}

/** Opens an engine (one thread created) and serves it. */
export async function apiEngine(
  steps: ScriptStep[],
  options: Parameters<typeof engine>[1] & { basePath?: string; turnControl?: boolean } = {},
): Promise<ApiEngine> {
  const e = await engine(steps, options);
  const calls: string[] = [];
  const checks: AuthorizeCheck[] = [];
  const verdict: { value: boolean | "throw" } = { value: true };
  const app = threadApi(spyService(e.threads, calls), {
    basePath: options.basePath,
    turnControl: options.turnControl,
    authorize: (check) => {
      checks.push(check);
      if (verdict.value === "throw") throw new Error("authorize failed: secret-token-123");
      return verdict.value;
    },
  });
  const call: ApiEngine["call"] = (method, path, init = {}) => {
    const headers = new Headers(init.headers);
    if (init.key !== undefined) headers.set("idempotency-key", init.key);
    if (init.body !== undefined && !headers.has("content-type")) {
      headers.set("content-type", "application/json");
    }
    const body = init.body === undefined
      ? undefined
      : typeof init.body === "string"
      ? init.body
      : JSON.stringify(init.body);
    return Promise.resolve(
      app.request(path, { method, headers, body, signal: init.signal }),
    );
  };
  return { ...e, app, calls, checks, verdict, call };
}

/** Reads a whole SSE body into its `event`/`data` pairs and comment lines. */
export async function readSse(
  response: Response,
): Promise<{ event?: string; data?: string; comment?: string }[]> {
  const text = await response.text();
  return text.split("\n\n").filter((block) => block !== "").map((block) => {
    const out: { event?: string; data?: string; comment?: string } = {};
    for (const line of block.split("\n")) {
      if (line.startsWith(":")) out.comment = line.slice(1).trim();
      else if (line.startsWith("event: ")) out.event = line.slice(7);
      else if (line.startsWith("data: ")) out.data = line.slice(6);
    }
    return out;
  });
}
