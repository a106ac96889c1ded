/**
 * The route table of the thread API: one entry per route, naming its method,
 * path, the action `authorize` sees, and how it calls the service. Adding a
 * route is adding one entry here (and one method to the client).
 *
 * @module
 */
import { z } from "zod";
import type {
  ImageAttachment,
  InputContextItem,
  InputReference,
  LocalThreadService,
  ThreadService,
} from "@floret/engine";
import { chatBodySchema } from "./chat_request.ts";
import { chatAnswers } from "./chat_authorize.ts";
import { chatResponse } from "./chat_route.ts";
import { type ChatRouteOptions, disconnectHook } from "./chat_turn_stream.ts";
import { resumeResponse } from "./chat_resume.ts";
import { jsonBody, queryNumber, queryOf, requestKeyOf } from "./request_input.ts";
import { eventsResponse } from "./sse_events.ts";
import { wireJson } from "./wire_json.ts";

/**
 * What `authorize` is asked about: the service method a route calls (or
 * `chat`). Editing a queued input asks about `send`: like a message, it puts
 * the user's text into the thread. Steering (`…/steer`, `…/queue/:queueId/steer`)
 * asks about `steer`: it redirects the turn under way, which a host may allow
 * fewer callers than sending. The chat route asks about `chat`, and also about
 * `respond` when it answers approvals or questions.
 */
export type HttpAction =
  | "create"
  | "list"
  | "view"
  | "setTitle"
  | "delete"
  | "history"
  | "send"
  | "respond"
  | "cancel"
  | "retry"
  | "fork"
  | "promoteQueued"
  | "deleteQueued"
  | "compact"
  | "context"
  | "artifact"
  | "waitForIdle"
  | "subscribe"
  | "chat"
  | "steer";

/** What a route handler gets. */
export interface RouteCall {
  service: ThreadService;
  request: Request;
  /** A decoded path parameter. */
  param(name: string): string;
  /** Keep-alive interval of streams. */
  pingMs: number;
  /** `threadApi`'s `chat` options. */
  chat: ChatRouteOptions;
  /** The caller's tenant (`authorize` answered `{ tenant }`), if any. */
  tenant: string | undefined;
  /**
   * Asks `authorize` about a further action the route takes for the caller;
   * rejects with `forbidden` (a RequestRefused) when it is not allowed.
   */
  authorizeAlso(action: HttpAction): Promise<void>;
}

/** One route of the API. */
export interface ApiRoute {
  action: HttpAction;
  method: "GET" | "POST" | "PATCH" | "DELETE" | "PUT";
  path: string;
  /**
   * A method beyond the ThreadService type that the route calls (turn control,
   * which `host.threads()` has): the route exists only on apps whose service has it.
   */
  needs?: "steer" | "editQueued" | "steerQueued";
  handle(call: RouteCall): Promise<Response>;
}

const empty = z.strictObject({});
const optionalString = z.string().optional();

const listQuery = z.object({
  limit: queryNumber.optional(),
  cursor: optionalString,
  parentThreadId: optionalString,
});
const historyQuery = z.object({ limit: queryNumber.optional(), before: optionalString });
const idleQuery = z.object({ timeoutMs: queryNumber.optional() });

/** A JSON response (the API's wire form). */
export const json = (status: number, value: unknown): Response =>
  new Response(wireJson(value), { status, headers: { "content-type": "application/json" } });

/** A mutation: request key from the header, then the body, then the service. */
export function mutation<S extends z.ZodType>(
  action: HttpAction,
  method: ApiRoute["method"],
  path: string,
  body: S,
  run: (call: RouteCall, requestKey: string, body: z.infer<S>) => Promise<Response>,
): ApiRoute {
  return {
    action,
    method,
    path,
    handle: async (call) => {
      const requestKey = requestKeyOf(call.request);
      return await run(call, requestKey, await jsonBody(call.request, body));
    },
  };
}

/**
 * Every route of http.md's table, plus the turn control of the in-process
 * service (`PATCH …/queue/:queueId` edits a queued input, `POST …/steer`
 * steers the turn under way), served with `turnControl: true` when the
 * service has those methods.
 */
export const ROUTES: readonly ApiRoute[] = [
  mutation(
    "create",
    "POST",
    "/threads",
    z.strictObject({ title: optionalString }),
    async ({ service, tenant }, requestKey, body) =>
      json(
        201,
        await service.create(
          tenant === undefined ? { requestKey, ...body } : { requestKey, ...body, tenant },
        ),
      ),
  ),
  {
    action: "list",
    method: "GET",
    path: "/threads",
    handle: async ({ service, request, tenant }) => {
      const query = queryOf(request.url, listQuery);
      return json(200, await service.list(tenant === undefined ? query : { ...query, tenant }));
    },
  },
  {
    action: "view",
    method: "GET",
    path: "/threads/:threadId",
    handle: async ({ service, param }) => json(200, await service.view(param("threadId"))),
  },
  mutation(
    "setTitle",
    "PATCH",
    "/threads/:threadId",
    z.strictObject({ title: z.string() }),
    async ({ service, param }, requestKey, body) =>
      json(200, await service.setTitle({ threadId: param("threadId"), requestKey, ...body })),
  ),
  mutation("delete", "DELETE", "/threads/:threadId", empty, async ({ service, param }, key) => {
    await service.delete({ threadId: param("threadId"), requestKey: key });
    return new Response(null, { status: 204 });
  }),
  {
    action: "history",
    method: "GET",
    path: "/threads/:threadId/history",
    handle: async ({ service, request, param }) => {
      const query = queryOf(request.url, historyQuery);
      return json(200, await service.history(param("threadId"), query));
    },
  },
  mutation(
    "send",
    "POST",
    "/threads/:threadId/messages",
    z.strictObject({
      input: z.strictObject({
        text: z.string(),
        // The service checks each attachment's shape; here it only has to be an object.
        attachments: z.array(
          z.custom<ImageAttachment>((value) => typeof value === "object" && value !== null),
        ).optional(),
        // References, context items and labels too: the service checks them and their bounds.
        references: z.array(z.custom<InputReference>(isObject)).optional(),
        context: z.array(z.custom<InputContextItem>(isObject)).optional(),
      }),
      supplementalContext: z.array(z.strictObject({ title: z.string(), text: z.string() }))
        .optional(),
      labels: z.custom<Record<string, string>>(isObject).optional(),
    }),
    async ({ service, param }, requestKey, body) =>
      json(202, await service.send({ threadId: param("threadId"), requestKey, ...body })),
  ),
  mutation(
    "respond",
    "POST",
    "/threads/:threadId/interactions/:interactionId",
    z.strictObject({
      decision: z.enum(["approve", "deny"]).optional(),
      answers: z.array(z.strictObject({ questionId: z.string(), value: z.string() })).optional(),
    }),
    async ({ service, param }, requestKey, body) =>
      json(
        200,
        await service.respond({
          threadId: param("threadId"),
          interactionId: param("interactionId"),
          requestKey,
          ...body,
        }),
      ),
  ),
  mutation(
    "cancel",
    "POST",
    "/threads/:threadId/cancel",
    z.strictObject({
      mode: z.enum(["immediate", "graceful"]).optional(),
      includeDescendants: z.boolean().optional(),
    }),
    async ({ service, param }, requestKey, body) =>
      json(200, await service.cancel({ threadId: param("threadId"), requestKey, ...body })),
  ),
  mutation(
    "retry",
    "POST",
    "/threads/:threadId/retry",
    z.strictObject({ turnId: optionalString }),
    async ({ service, param }, requestKey, body) =>
      json(202, await service.retry({ threadId: param("threadId"), requestKey, ...body })),
  ),
  mutation(
    "fork",
    "POST",
    "/threads/:threadId/fork",
    z.strictObject({ atItemId: optionalString }),
    async ({ service, param }, requestKey, body) =>
      json(201, await service.fork({ threadId: param("threadId"), requestKey, ...body })),
  ),
  mutation(
    "promoteQueued",
    "POST",
    "/threads/:threadId/queue/:queueId/promote",
    empty,
    async ({ service, param }, requestKey) =>
      json(
        202,
        await service.promoteQueued({
          threadId: param("threadId"),
          queueId: param("queueId"),
          requestKey,
        }),
      ),
  ),
  mutation(
    "deleteQueued",
    "DELETE",
    "/threads/:threadId/queue/:queueId",
    z.strictObject({ expectedText: optionalString }),
    async ({ service, param }, requestKey, body) =>
      json(
        200,
        await service.deleteQueued({
          threadId: param("threadId"),
          queueId: param("queueId"),
          requestKey,
          ...body,
        }),
      ),
  ),
  {
    ...mutation(
      "send",
      "PATCH",
      "/threads/:threadId/queue/:queueId",
      z.strictObject({
        text: z.string(),
        expectedText: z.string(),
        attachments: z.array(
          z.custom<ImageAttachment>((value) => typeof value === "object" && value !== null),
        ).optional(),
      }),
      async ({ service, param }, requestKey, body) =>
        json(
          200,
          await (service as LocalThreadService).editQueued({
            threadId: param("threadId"),
            queueId: param("queueId"),
            requestKey,
            ...body,
          }),
        ),
    ),
    needs: "editQueued",
  },
  {
    ...mutation(
      "steer",
      "POST",
      "/threads/:threadId/steer",
      z.strictObject({ text: z.string() }),
      async ({ service, param }, requestKey, body) =>
        json(
          200,
          await (service as LocalThreadService).steer({
            threadId: param("threadId"),
            requestKey,
            ...body,
          }),
        ),
    ),
    needs: "steer",
  },
  mutation(
    "compact",
    "POST",
    "/threads/:threadId/compact",
    z.strictObject({ continueGoal: z.boolean().optional() }),
    async ({ service, param }, requestKey, body) =>
      json(200, await service.compact({ threadId: param("threadId"), requestKey, ...body })),
  ),
  {
    action: "context",
    method: "GET",
    path: "/threads/:threadId/context",
    handle: async ({ service, param }) => json(200, await service.context(param("threadId"))),
  },
  {
    action: "artifact",
    method: "GET",
    path: "/threads/:threadId/artifacts/:artifactId",
    handle: async ({ service, param }) =>
      json(200, await service.artifact(param("threadId"), param("artifactId"))),
  },
  {
    action: "waitForIdle",
    method: "GET",
    path: "/threads/:threadId/idle",
    handle: async ({ service, request, param }) => {
      const { timeoutMs } = queryOf(request.url, idleQuery);
      // A client that goes away stops the wait.
      const view = await service.waitForIdle(param("threadId"), {
        timeoutMs,
        signal: request.signal,
      });
      return json(200, view);
    },
  },
  {
    action: "subscribe",
    method: "GET",
    path: "/threads/:threadId/events",
    handle: ({ service, request, param, pingMs }) =>
      eventsResponse(service, param("threadId"), { signal: request.signal, pingMs }),
  },
  {
    action: "chat",
    method: "POST",
    path: "/threads/:threadId/chat",
    handle: async ({ service, request, param, pingMs, chat, authorizeAlso }) => {
      const headerKey = request.headers.has("idempotency-key") ? requestKeyOf(request) : undefined;
      const body = await jsonBody(request, chatBodySchema);
      // Answers (approvals, ask_user outputs) are a `respond`, whatever route carries them.
      if (chatAnswers(body)) await authorizeAlso("respond");
      return await chatResponse(service, param("threadId"), {
        body,
        headerKey,
        signal: request.signal,
        pingMs,
        chat,
      });
    },
  },
  {
    // The AI SDK's default resume URL (`useChat({ resume: true })`); `chatId` is not read.
    action: "chat",
    method: "GET",
    path: "/threads/:threadId/chat/:chatId/stream",
    handle: ({ service, request, param, pingMs, chat }) =>
      resumeResponse(service, param("threadId"), {
        signal: request.signal,
        pingMs,
        onDisconnect: disconnectHook(service, param("threadId"), chat),
      }),
  },
];

/** A JSON object (not an array, not null): what the service then checks field by field. */
function isObject(value: unknown): boolean {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
