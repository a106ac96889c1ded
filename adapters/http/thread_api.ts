/**
 * `threadApi`: a hono app serving a ThreadService over HTTP (http.md).
 * Unknown routes answer 404 before anything else runs; on a known route,
 * `authorize` runs first, then the route's handler, which reads the request
 * key and a bounded body before it calls the service.
 *
 * @module
 */
import { Hono } from "hono";
import { FloretError, type ThreadService } from "@floret/engine";
import { errorResponse, responseForError } from "./error_response.ts";
import { type HttpAction, ROUTES } from "./routes.ts";
import type { ChatRouteOptions } from "./chat_turn_stream.ts";
import { LONG_WORK_ROUTES } from "./long_work_routes.ts";
import { PING_INTERVAL_MS } from "./sse_events.ts";
import { admissionOf, assertAllowed, assertTenantOwns, type AuthorizeVerdict } from "./tenancy.ts";

/** The question `authorize` answers for every request to a known route. */
export interface AuthorizeCheck {
  /** The incoming request; read its headers, not its body (the route reads that). */
  request: Request;
  /** What the request asks to do (the service method it maps to). */
  action: HttpAction;
  /** Absent for `create` and `list` (a list of children, `?parentThreadId=`, names its parent). */
  threadId?: string;
}

/**
 * The app {@link threadApi} returns: a hono app. Serve `app.fetch`
 * (`Deno.serve(app.fetch)`, `Bun.serve({ fetch: app.fetch })`,
 * `@hono/node-server`), call `app.request("/threads")` in tests, or mount it
 * in your own hono app with `parent.route("/", app)`. An alias of our own so
 * the docs of this package stay complete without hono's.
 */
export type ThreadApp = Hono;

/** Options of {@link threadApi}. */
export interface ThreadApiOptions {
  /**
   * Required. `true` lets the request through; `{ tenant }` lets it through
   * for that tenant only (it creates threads of that tenant, lists only them,
   * and every other thread answers 404 `thread_not_found`); anything else
   * answers 403 `forbidden`.
   */
  // Method syntax on purpose: an `authorize` written against an earlier, narrower
  // `HttpAction` (without `steer`) still type-checks here.
  authorize(check: AuthorizeCheck): AuthorizeVerdict | Promise<AuthorizeVerdict>;
  /** A prefix of every route, such as `"/api"`; defaults to `""`. */
  basePath?: string | undefined;
  /** How often streams send a `: ping` comment line; defaults to 15 000 ms. */
  pingIntervalMs?: number | undefined;
  /**
   * Also serve the turn control of the in-process service, beyond http.md's
   * table: `PATCH /threads/:threadId/queue/:queueId` `{text, expectedText}`
   * (`editQueued`) and `POST /threads/:threadId/steer` `{text}` (`steer`), both
   * 200 `{view}`; `authorize` sees the edit as `send` (it puts the user's text
   * into the thread) and steering (here and `POST …/queue/:queueId/steer`) as
   * `steer`, so a host can let users send without letting them redirect a
   * turn under way. Defaults to `false`, which keeps the app to http.md's
   * routes; a service without those methods gets no such routes either way.
   */
  turnControl?: boolean | undefined;
  /**
   * The chat route (`POST /threads/:threadId/chat`). `cancelOnDisconnect`:
   * when the client of a chat stream goes away before its turn ended (the AI
   * SDK's `stop()`, a closed tab), cancel the turn immediately. Defaults to
   * `false`: the turn is durable and runs on; `GET …/chat/:chatId/stream`
   * resumes it.
   */
  chat?: ChatRouteOptions | undefined;
}

/**
 * Builds the HTTP API of a thread service.
 *
 * @param service the service to serve (in-process, or even a `threadClient`)
 * @param options `authorize` (required), `basePath`, `pingIntervalMs`, `turnControl` and `chat`
 * @returns a hono app ({@link ThreadApp}); serve `app.fetch` or mount it
 * @throws {FloretError} `invalid_input` without an `authorize` function, or with a
 *   bad `basePath`, `pingIntervalMs`, `turnControl` or `chat`
 * @example
 * ```ts
 * import { memoryStore, openHost, defineAgent } from "@floret/engine";
 * import { scriptedGateway } from "@floret/engine/testing";
 * import { threadApi } from "@floret/engine/http";
 *
 * const host = await openHost({ store: memoryStore() });
 * const threads = host.threads({
 *   agent: defineAgent({ id: "a", systemPrompt: "Be brief.", gateway: scriptedGateway([]) }),
 * });
 * const app = threadApi(threads, {
 *   authorize: ({ request }) => request.headers.get("authorization") === "Bearer secret",
 * });
 * const response = await app.request("/threads", { headers: { authorization: "Bearer secret" } });
 * console.log(response.status); // 200
 * await host.shutdown();
 * ```
 */
export function threadApi(service: ThreadService, options: ThreadApiOptions): ThreadApp {
  if (typeof options !== "object" || options === null) {
    throw new FloretError("invalid_input", "threadApi needs options with an authorize function");
  }
  const {
    authorize,
    basePath = "",
    pingIntervalMs = PING_INTERVAL_MS,
    turnControl = false,
    chat = {},
  } = options;
  if (typeof authorize !== "function") {
    throw new FloretError("invalid_input", "threadApi needs an authorize function");
  }
  if (typeof basePath !== "string" || (basePath !== "" && !/^\/.*[^/]$/.test(basePath))) {
    throw new FloretError(
      "invalid_input",
      `basePath must be empty or start with "/" and not end with it: ${String(basePath)}`,
    );
  }
  if (
    typeof pingIntervalMs !== "number" || !Number.isInteger(pingIntervalMs) ||
    pingIntervalMs <= 0 || pingIntervalMs > 2 ** 31 - 1
  ) {
    // Past 2^31−1 ms a timer fires at once, and a ping loop would spin.
    throw new FloretError(
      "invalid_input",
      `pingIntervalMs must be an integer from 1 to 2^31-1`,
    );
  }
  if (typeof turnControl !== "boolean") {
    throw new FloretError("invalid_input", "turnControl must be a boolean");
  }
  if (
    typeof chat !== "object" || chat === null ||
    !["undefined", "boolean"].includes(typeof chat.cancelOnDisconnect)
  ) {
    throw new FloretError("invalid_input", "chat must be { cancelOnDisconnect?: boolean }");
  }
  const chatOptions: ChatRouteOptions = { cancelOnDisconnect: chat.cancelOnDisconnect === true };
  const app = new Hono();
  const routes = basePath === "" ? app : app.basePath(basePath);
  for (const route of [...ROUTES, ...LONG_WORK_ROUTES]) {
    // Turn control only when asked for, and only where the service has the
    // method: otherwise it is an unknown route (404), not a 500.
    if (
      route.needs !== undefined &&
      (!turnControl ||
        typeof (service as unknown as Record<string, unknown>)[route.needs] !== "function")
    ) continue;
    // One handler per route, authorize included: hono runs a lone handler
    // directly, where a guard middleware in front of it costs a compose chain
    // per request.
    const needsThreadId = route.path.includes(":threadId");
    const isList = route.action === "list";
    routes.on(route.method, route.path, async (c) => {
      const request = c.req.raw;
      // Listing a thread's children is a question about that thread.
      const threadId = needsThreadId
        ? c.req.param("threadId")
        : isList
        ? c.req.query("parentThreadId")
        : undefined;
      let verdict: unknown;
      try {
        verdict = await authorize({ request, action: route.action, threadId });
      } catch {
        return errorResponse("internal");
      }
      const admission = admissionOf(verdict);
      if (!admission.allowed) return errorResponse("forbidden");
      const { tenant } = admission;
      // Another tenant's thread is a missing thread, before the route reads anything.
      if (threadId !== undefined) await assertTenantOwns(service, threadId, tenant);
      return await route.handle({
        service,
        request,
        param: (name) => c.req.param(name) ?? "",
        pingMs: pingIntervalMs,
        chat: chatOptions,
        tenant,
        authorizeAlso: async (action) => {
          let also: unknown;
          try {
            also = await authorize({ request, action, threadId });
          } catch (error) {
            throw new FloretError("internal", "authorize failed", { cause: error });
          }
          const more = admissionOf(also);
          // The same caller: a different tenant for the second question is no permission.
          assertAllowed(more.allowed && more.tenant === tenant ? more : { allowed: false });
        },
      });
    });
  }
  app.notFound(() => errorResponse("not_found"));
  app.onError((error) => responseForError(error));
  return app;
}
