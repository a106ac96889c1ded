/**
 * `GET /threads/:threadId/chat/:chatId/stream`: the AI SDK's default resume
 * URL for a chat whose `api` is `/threads/:threadId/chat` (`useChat({ resume:
 * true })` calls it on page load). The thread is the chat, so `chatId` is not
 * read. It answers 204 when no turn is open, else the open turn's UI message
 * stream from that turn's start (rebuilt from the view, which the journal
 * makes), then live, to its end. A turn waiting for the user streams what it
 * has and ends with its requests, as the chat route does. After a host
 * restart the turn the old process left is settled (`interrupted`), so 204.
 *
 * @module
 */
import type { ThreadService } from "@floret/engine";
import { TurnChunks } from "./chat_stream.ts";
import { type TurnStreamOptions, turnStreamResponse } from "./chat_turn_stream.ts";

/** Thrown inside `begin` when no turn is open: answered with 204. */
class NoOpenTurn extends Error {}

/**
 * Answers a resume request.
 *
 * @param service the thread service
 * @param threadId the thread
 * @param options signal, ping interval and the disconnect hook
 * @returns 204, or the open turn's stream
 */
export async function resumeResponse(
  service: ThreadService,
  threadId: string,
  options: TurnStreamOptions,
): Promise<Response> {
  try {
    // The view is read after the subscription opened: a turn that ends in
    // between still ends the stream, from its live updates.
    return await turnStreamResponse(service, threadId, async () => {
      const view = await service.view(threadId);
      const open = view.turns.findLast((turn) => turn.outcome === undefined);
      if (open === undefined || view.status === "idle") throw new NoOpenTurn();
      return new TurnChunks(open.turnId);
    }, options);
  } catch (error) {
    if (error instanceof NoOpenTurn) return new Response(null, { status: 204 });
    throw error;
  }
}
