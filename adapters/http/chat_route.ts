/**
 * `POST /threads/:threadId/chat`: the AI SDK's `DefaultChatTransport` request,
 * answered with one turn as a UI message stream, so `useChat` drives a durable
 * thread. What the request does depends on its body:
 *
 * - `trigger: "regenerate-message"` retries the thread's latest turn (a
 *   completed one regenerates) under the `Idempotency-Key`, else
 *   `regenerate:<messageId>`; the stream is the new turn.
 * - A last message from the assistant carrying approval responses or
 *   `ask_user` outputs answers them (`respond`) and streams the rest of the
 *   turn (`chat_continue.ts`).
 * - Otherwise the last user message is sent. While the thread waits for an
 *   approval or an answer, a new message is refused with an error chunk
 *   naming `thread_waiting` (the chat would otherwise sit in `submitted`).
 *   Posting the same message id again replays the committed turn.
 *
 * The turn runs on when the client goes away, unless the app was built with
 * `chat: { cancelOnDisconnect: true }`.
 *
 * @module
 */
import type { ThreadService, ThreadView } from "@floret/engine";
import { chatToolAnswers } from "./chat_answers.ts";
import { ChatRefusal, continueTurn } from "./chat_continue.ts";
import { chatApprovals, type ChatBody, chatInput, regenerateKey } from "./chat_request.ts";
import { TurnChunks } from "./chat_stream.ts";
import type { ChatRouteOptions } from "./chat_turn_stream.ts";
import { chatErrorResponse, disconnectHook, turnStreamResponse } from "./chat_turn_stream.ts";

/** What the chat route gets from the request. */
export interface ChatRequest {
  body: ChatBody;
  /** The trimmed `Idempotency-Key`, if sent. */
  headerKey: string | undefined;
  signal: AbortSignal;
  pingMs: number;
  chat: ChatRouteOptions;
}

/**
 * Answers one chat request.
 *
 * @param service the thread service
 * @param threadId the thread
 * @param request the parsed body, key, signal, ping interval and chat options
 * @returns the UI message stream response
 */
export async function chatResponse(
  service: ThreadService,
  threadId: string,
  request: ChatRequest,
): Promise<Response> {
  const { body, headerKey } = request;
  const options = {
    signal: request.signal,
    pingMs: request.pingMs,
    onDisconnect: disconnectHook(service, threadId, request.chat),
  };
  const regenerate = regenerateKey(body, headerKey);
  if (regenerate !== undefined) {
    return await turnStreamResponse(service, threadId, async () => {
      const retried = await service.retry({ threadId, requestKey: regenerate });
      return new TurnChunks(retried.turnId);
    }, options);
  }
  const continued = { approvals: chatApprovals(body), answers: chatToolAnswers(body) };
  if (continued.approvals.length > 0 || continued.answers.length > 0) {
    try {
      return await turnStreamResponse(
        service,
        threadId,
        () => continueTurn(service, threadId, continued, headerKey),
        options,
      );
    } catch (error) {
      if (error instanceof ChatRefusal) return chatErrorResponse(error.code, error.detail);
      throw error;
    }
  }
  const { text, requestKey } = chatInput(body, headerKey);
  const waiting = waitingOn(await service.view(threadId), text);
  if (waiting !== undefined) {
    return chatErrorResponse(
      "thread_waiting",
      `the thread waits for interaction ${waiting}; answer it (or cancel the turn) first`,
    );
  }
  return await turnStreamResponse(service, threadId, async () => {
    const sent = await service.send({ threadId, requestKey, input: { text } });
    const knownTurns = new Set(sent.view.turns.map((turn) => turn.turnId));
    return new TurnChunks(sent.turnId, sent.queued ? { requestKey, text, knownTurns } : undefined);
  }, options);
}

/**
 * The interaction a new message would wait behind, if the thread waits for
 * the user. A message whose text is the waiting turn's own user text is taken
 * as that turn's message posted again (a replay), which streams the turn.
 */
function waitingOn(view: ThreadView, text: string): string | undefined {
  if (view.status !== "waiting") return undefined;
  const pending = view.pending.find((p) => p.status === "pending");
  if (!pending) return undefined;
  const own = view.items.find((item) => item.turnId === pending.turnId && item.kind === "user");
  return own?.text === text ? undefined : pending.id;
}
