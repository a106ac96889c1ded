/**
 * The third wave's long-work routes (http.md "Third wave"): the thread goal,
 * turning a queued input into a steer, and the children's facts.
 *
 * Goal changes ask `authorize` about `send` (they decide what the agent works
 * on, and a submit starts a turn), turning a queued input into a steer about
 * `steer`, the children's facts about `view`.
 *
 * @module
 */
import { z } from "zod";
import type { LocalThreadService } from "@floret/engine";
import { type ApiRoute, json, mutation } from "./routes.ts";
import { queryNumber, queryOf } from "./request_input.ts";

const parentEventsQuery = z.object({
  limit: queryNumber.optional(),
  cursor: z.string().optional(),
});

// The methods live on the in-process service (and threadClient), beyond the ThreadService type.
const local = (service: unknown): LocalThreadService => service as LocalThreadService;

/** The long-work routes; `steerQueued` is turn control (`turnControl: true`). */
export const LONG_WORK_ROUTES: readonly ApiRoute[] = [
  mutation(
    "send",
    "PUT",
    "/threads/:threadId/goal",
    z.strictObject({ text: z.string(), submit: z.boolean().optional() }),
    async ({ service, param }, requestKey, body) => {
      const command = { threadId: param("threadId"), requestKey, text: body.text };
      return json(
        200,
        body.submit === true
          ? await local(service).submitGoal(command)
          : await local(service).setGoal(command),
      );
    },
  ),
  mutation(
    "send",
    "DELETE",
    "/threads/:threadId/goal",
    z.strictObject({}),
    async ({ service, param }, requestKey) =>
      json(200, await local(service).deleteGoal({ threadId: param("threadId"), requestKey })),
  ),
  {
    ...mutation(
      "steer",
      "POST",
      "/threads/:threadId/queue/:queueId/steer",
      z.strictObject({ expectedText: z.string() }),
      async ({ service, param }, requestKey, body) =>
        json(
          200,
          await local(service).steerQueued({
            threadId: param("threadId"),
            queueId: param("queueId"),
            requestKey,
            expectedText: body.expectedText,
          }),
        ),
    ),
    needs: "steerQueued",
  },
  {
    action: "view",
    method: "GET",
    path: "/threads/:threadId/parent-events",
    handle: async ({ service, request, param }) => {
      const query = queryOf(request.url, parentEventsQuery);
      return json(200, await local(service).listParentEvents(param("threadId"), query));
    },
  },
];
