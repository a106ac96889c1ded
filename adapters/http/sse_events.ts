/**
 * `GET /threads/:threadId/events`: a thread's live updates as server-sent
 * events. The stream is pulled, never pushed: an update is read from the
 * engine only when the response body wants the next chunk, so a client that
 * stops reading leaves the backlog with the engine, whose subscriber limits
 * turn it into one `resync` (the stream then ends). Nothing here grows with a
 * slow reader: at most one ping waits in the body's queue.
 *
 * @module
 */
import type { ThreadService, ThreadUpdate, ThreadView } from "@floret/engine";
import { wireJson } from "./wire_json.ts";

/** A comment line goes out this often by default, so proxies keep the connection open. */
export const PING_INTERVAL_MS = 15_000;

/** Headers of every event stream. */
export const SSE_HEADERS: Readonly<Record<string, string>> = {
  "content-type": "text/event-stream; charset=utf-8",
  "cache-control": "no-cache, no-transform",
  "x-accel-buffering": "no",
};

const encoder = new TextEncoder();

/**
 * One SSE event. JSON text holds no raw line breaks, so one `data:` line suffices.
 *
 * @param event the event name
 * @param data its JSON-serialisable payload
 * @returns the encoded event
 */
export function sseEvent(event: string, data: unknown): Uint8Array {
  return encoder.encode(`event: ${event}\ndata: ${wireJson(data)}\n\n`);
}

/** The keep-alive comment line. */
export const PING: Uint8Array = encoder.encode(": ping\n\n");

/**
 * Subscribes, then reads the view (so no update falls between), and answers
 * with `view`, the later `batch`es, and a final `resync` when the engine says so.
 * A failure before streaming (an unknown thread) is thrown, for an error answer.
 *
 * @param service the thread service
 * @param threadId the thread
 * @param options `signal`: the request's signal (closing the request ends the
 *   subscription); `pingMs`: the keep-alive interval
 * @returns the `text/event-stream` response
 */
export async function eventsResponse(
  service: ThreadService,
  threadId: string,
  options: { signal: AbortSignal; pingMs: number },
): Promise<Response> {
  const stop = new AbortController();
  const updates = service.subscribe(threadId, { signal: stop.signal })[Symbol.asyncIterator]();
  let view: ThreadView;
  try {
    view = await service.view(threadId);
  } catch (error) {
    stop.abort();
    await updates.return?.();
    throw error;
  }
  const body = pulledStream(updates, {
    ...options,
    stop,
    first: sseEvent("view", view),
    onUpdate: (update, emit) => {
      if (update.type === "batch") {
        // Already part of the view the client got first.
        if (update.version > view.viewVersion) emit(sseEvent("batch", update));
        return "more";
      }
      emit(sseEvent("resync", update));
      return "end";
    },
  });
  return new Response(body, { status: 200, headers: SSE_HEADERS });
}

/** Tells the stream whether to keep reading after one update. */
export type UpdateStep = "more" | "end";

/** How a {@link pulledStream} writes and ends. */
export interface PulledStreamOptions {
  /** The request's signal. */
  signal: AbortSignal;
  /** Aborts the subscription. */
  stop: AbortController;
  /** The keep-alive interval. */
  pingMs: number;
  /** Writes the chunks of one update; returns whether to go on. */
  onUpdate: (
    update: ThreadUpdate,
    emit: (chunk: Uint8Array) => void,
  ) => UpdateStep | Promise<UpdateStep>;
  /** A chunk that opens the stream. */
  first?: Uint8Array;
  /** Writes closing chunks when the subscription ends by itself. */
  onEnd?: (emit: (chunk: Uint8Array) => void) => void;
  /** Called once when the client goes away (request aborted, body cancelled) before the end. */
  onDisconnect?: () => void;
}

/**
 * A response body fed by a subscription, one update per pull, with pings and
 * clean-up on every way out (end, cancel, request abort, failure). The
 * high-water mark is zero: nothing is read from the engine before the body
 * asks for it.
 *
 * @param updates the subscription
 * @param options signal, stop, ping interval, and how to write updates
 * @returns the body stream
 */
export function pulledStream(
  updates: AsyncIterator<ThreadUpdate>,
  options: PulledStreamOptions,
): ReadableStream<Uint8Array> {
  const { signal, stop, onUpdate, first, onEnd } = options;
  let timer: ReturnType<typeof setInterval> | undefined;
  let finished = false;
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const finish = (): void => {
    if (finished) return;
    finished = true;
    clearInterval(timer);
    signal.removeEventListener("abort", onAbort);
    stop.abort();
    void updates.return?.();
  };
  const close = (): void => {
    const wasOpen = !finished;
    finish();
    if (wasOpen) controller.close();
  };
  const onAbort = (): void => {
    if (finished) return;
    finish();
    options.onDisconnect?.();
    try {
      controller.close();
    } catch {
      // Already closed or cancelled by the reader.
    }
  };
  return new ReadableStream<Uint8Array>({
    start(c) {
      controller = c;
      if (first) c.enqueue(first);
      if (signal.aborted) return onAbort();
      signal.addEventListener("abort", onAbort, { once: true });
      timer = setInterval(() => {
        // At most one ping waits for a reader that is not reading.
        if (!finished && (c.desiredSize ?? 0) >= 0) c.enqueue(PING);
      }, options.pingMs);
    },
    async pull(c) {
      const emit = (chunk: Uint8Array): void => {
        if (!finished) c.enqueue(chunk);
      };
      let enqueued = false;
      const counting = (chunk: Uint8Array): void => {
        enqueued = true;
        emit(chunk);
      };
      while (!finished && !enqueued) {
        let next: IteratorResult<ThreadUpdate>;
        try {
          next = await updates.next();
        } catch {
          // The subscription broke (a store fault): the client must read the view again.
          if (finished) return;
          emit(sseEvent("resync", { type: "resync", reason: "subscription failed" }));
          return close();
        }
        if (finished) return;
        if (next.done) {
          onEnd?.(emit);
          return close();
        }
        if ((await onUpdate(next.value, counting)) === "end") return close();
      }
    },
    cancel() {
      if (finished) return;
      finish();
      options.onDisconnect?.();
    },
  }, { highWaterMark: 0 });
}
