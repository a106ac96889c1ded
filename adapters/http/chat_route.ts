/**
 * `POST /threads/:threadId/chat`: sends the chat request's user text and
 * answers with the turn as an AI SDK UI message stream, so `useChat` drives a
 * durable thread. Posting the same message id again replays: the send is a
 * replay of the same request key, and the committed turn is read from the view.
 * A request whose last message is the assistant's, carrying approval
 * responses, answers those approvals and streams the rest of their turn.
 *
 * @module
 */
import { FloretError, type ThreadService, type ThreadView } from "@floret/engine";
import { type ChatApproval, chatApprovals, type ChatBody, chatInput } from "./chat_request.ts";
import { TurnChunks, UI_STREAM_HEADERS, type UiChunk, uiChunkBytes } from "./chat_stream.ts";
import { pulledStream } from "./sse_events.ts";

/**
 * Sends and streams one chat turn.
 *
 * @param service the thread service
 * @param threadId the thread
 * @param request the parsed body, the `Idempotency-Key` (if any), the request's
 *   signal and the keep-alive interval
 * @returns the UI message stream response
 */
export async function chatResponse(
  service: ThreadService,
  threadId: string,
  request: { body: ChatBody; headerKey: string | undefined; signal: AbortSignal; pingMs: number },
): Promise<Response> {
  const { text, requestKey } = chatInput(request.body, request.headerKey);
  const approvals = chatApprovals(request.body);
  // Subscribe before sending, so no update of the new turn is missed.
  const stop = new AbortController();
  const updates = service.subscribe(threadId, { signal: stop.signal })[Symbol.asyncIterator]();
  let view: ThreadView;
  let chunks: TurnChunks;
  try {
    if (approvals.length > 0) {
      chunks = await answerApprovals(service, threadId, approvals, request.headerKey);
    } else {
      const sent = await service.send({ threadId, requestKey, input: { text } });
      const knownTurns = new Set(sent.view.turns.map((turn) => turn.turnId));
      chunks = new TurnChunks(
        sent.turnId,
        sent.queued ? { requestKey, text, knownTurns } : undefined,
      );
    }
    // Read again: a replay's turn may have ended since it was admitted.
    view = await service.view(threadId);
  } catch (error) {
    stop.abort();
    await updates.return?.();
    throw error;
  }
  const write = (list: UiChunk[], emit: (chunk: Uint8Array) => void): void => {
    for (const chunk of list) emit(uiChunkBytes(chunk));
    if (chunks.finished) emit(uiChunkBytes("[DONE]"));
  };
  const opening: Uint8Array[] = [];
  write([{ type: "start" }, ...chunks.fromView(view)], (c) => opening.push(c));
  if (chunks.finished) {
    stop.abort();
    await updates.return?.();
    return new Response(concat(opening), { status: 200, headers: UI_STREAM_HEADERS });
  }
  let seen = view.viewVersion;
  const body = pulledStream(updates, {
    signal: request.signal,
    stop,
    pingMs: request.pingMs,
    first: concat(opening),
    onUpdate: async (update, emit) => {
      if (update.type === "resync") {
        const fresh = await service.view(threadId);
        seen = fresh.viewVersion;
        write(chunks.fromView(fresh), emit);
      } else if (update.version > seen) {
        write(chunks.fromUpdate(update), emit);
      }
      return chunks.finished ? "end" : "more";
    },
    onEnd: (emit) => {
      // The thread was deleted or the host shut down before the turn ended.
      emit(uiChunkBytes({ type: "finish" }));
      emit(uiChunkBytes("[DONE]"));
    },
  });
  return new Response(body, { status: 200, headers: UI_STREAM_HEADERS });
}

/**
 * Answers the approvals of a continued chat and returns the chunks of their
 * turn, with what the client already has (the view before the answers)
 * taken as written. Each answer's request key is the approval id (under the
 * `Idempotency-Key`, when sent), so posting the same continuation again
 * replays it; the same approval answered the other way is `request_conflict`.
 */
async function answerApprovals(
  service: ThreadService,
  threadId: string,
  approvals: ChatApproval[],
  headerKey: string | undefined,
): Promise<TurnChunks> {
  const before = await service.view(threadId);
  const first = approvals[0].interactionId;
  const turnId = before.items.find((item) => item.interaction?.id === first)?.turnId ??
    before.pending.find((p) => p.id === first)?.turnId;
  if (turnId === undefined) throw new FloretError("interaction_not_found", "No such interaction");
  for (const { interactionId, decision } of approvals) {
    const key = headerKey === undefined ? interactionId : `${headerKey}:${interactionId}`;
    await service.respond({ threadId, requestKey: key.slice(0, 256), interactionId, decision });
  }
  const chunks = new TurnChunks(turnId);
  chunks.skip(before);
  return chunks;
}

function concat(parts: Uint8Array[]): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}
