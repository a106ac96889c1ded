/**
 * The response of every chat stream: one turn as a UI message stream, first
 * what the view already shows, then live updates until the turn ends or waits.
 * The chat route (`POST …/chat`) and the resume route (`GET …/chat/:chatId/stream`)
 * both answer with it; a refusal the AI SDK should show in the chat (a message
 * while the thread waits, answers that do not fit) is {@link chatErrorResponse}.
 *
 * @module
 */
import type { ThreadService, ThreadView } from "@floret/engine";
import { type TurnChunks, UI_STREAM_HEADERS, type UiChunk, uiChunkBytes } from "./chat_stream.ts";
import { pulledStream } from "./sse_events.ts";

/** Options of the chat routes (`threadApi`'s `chat` option). */
export interface ChatRouteOptions {
  /** Cancel the turn (immediately) when its stream's client goes away; defaults to `false`. */
  cancelOnDisconnect?: boolean | undefined;
}

/** How a turn stream is read and ended. */
export interface TurnStreamOptions {
  /** The request's signal: a client that goes away stops the stream. */
  signal: AbortSignal;
  /** Keep-alive interval. */
  pingMs: number;
  /**
   * Called when the client goes away before the turn ended (only then):
   * `cancelOnDisconnect` stops the turn here. Without it the turn runs on.
   */
  onDisconnect?: (turnId: string | undefined) => void;
}

/**
 * Streams one turn. `begin` runs after the subscription is open (so no update
 * of a turn it starts is missed) and answers which turn to follow; a failure
 * in it closes the subscription and is thrown, for an HTTP error answer.
 *
 * @param service the thread service
 * @param threadId the thread
 * @param begin starts or finds the turn; returns its chunk writer
 * @param options signal, ping interval and the disconnect hook
 * @returns the UI message stream response
 */
export async function turnStreamResponse(
  service: ThreadService,
  threadId: string,
  begin: () => Promise<TurnChunks>,
  options: TurnStreamOptions,
): Promise<Response> {
  const stop = new AbortController();
  const updates = service.subscribe(threadId, { signal: stop.signal })[Symbol.asyncIterator]();
  let view: ThreadView;
  let chunks: TurnChunks;
  try {
    chunks = await begin();
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
  const { onDisconnect } = options;
  const body = pulledStream(updates, {
    signal: options.signal,
    stop,
    pingMs: options.pingMs,
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
    onDisconnect: onDisconnect && (() => {
      if (!chunks.finished) onDisconnect(chunks.turnId);
    }),
  });
  return new Response(body, { status: 200, headers: UI_STREAM_HEADERS });
}

/**
 * A UI message stream that only reports a refusal: `start`, an `error` chunk
 * whose text begins with `code` (the AI SDK shows it as the chat's error, its
 * status `error`), `finish`, `[DONE]`. Used where the client must not be left
 * waiting in `submitted`.
 *
 * @param code the reason, such as `thread_waiting` or `invalid_input`
 * @param message server-written text (never the engine's, never prompt text)
 * @returns the 200 response
 */
export function chatErrorResponse(code: string, message: string): Response {
  const chunks: (UiChunk | "[DONE]")[] = [
    { type: "start" },
    { type: "error", errorText: `${code}: ${message}` },
    { type: "finish" },
    "[DONE]",
  ];
  return new Response(concat(chunks.map(uiChunkBytes)), {
    status: 200,
    headers: UI_STREAM_HEADERS,
  });
}

/**
 * The disconnect hook of a chat stream: with `cancelOnDisconnect`, an
 * immediate cancel of the streamed turn; without, none (the turn runs on).
 *
 * @param service the thread service
 * @param threadId the thread
 * @param chat the chat options
 * @returns the hook, or `undefined`
 */
export function disconnectHook(
  service: ThreadService,
  threadId: string,
  chat: ChatRouteOptions,
): ((turnId: string | undefined) => void) | undefined {
  if (chat.cancelOnDisconnect !== true) return undefined;
  return (turnId) => {
    // A queued message has no turn yet: cancelling would stop another turn.
    if (turnId === undefined) return;
    // One key per turn: two streams of the same turn that both go away cancel once.
    const requestKey = `chat-disconnect:${turnId}`;
    service.cancel({ threadId, requestKey, mode: "immediate" }).catch(() => {
      // The turn ended meanwhile, or the host closed: nothing to stop.
    });
  };
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
