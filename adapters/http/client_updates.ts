/**
 * The client's `subscribe`: reads `GET /threads/:id/events` and yields each
 * `batch` and `resync` as the in-process service would. The leading `view`
 * event is skipped (callers read `view()` themselves). After a `resync` the
 * server ends the stream; this iterator reconnects at once, before handing
 * the `resync` on, so the caller's next `view()` (which waits for pending
 * connections, see {@link SubscribeGate}) reads a view the new stream follows.
 * It reads from the network only when the caller asks for the next update.
 *
 * @module
 */
import { createParser, type EventSourceMessage } from "eventsource-parser";
import { FloretError, type ThreadUpdate } from "@floret/engine";
import { errorOf } from "./client_transport.ts";

/**
 * Connections still being opened, per thread. A call on a thread waits for
 * them, so "subscribe, then view" orders as in-process: the view is read after
 * the server has registered the subscriber.
 */
export class SubscribeGate {
  readonly #pending = new Map<string, Set<Promise<unknown>>>();

  /**
   * Holds calls on a thread until `opening` settles.
   *
   * @param threadId the thread
   * @param opening the connection attempt
   */
  hold(threadId: string, opening: Promise<unknown>): void {
    let set = this.#pending.get(threadId);
    if (!set) this.#pending.set(threadId, set = new Set());
    const settled = opening.then(() => undefined, () => undefined);
    set.add(settled);
    void settled.then(() => {
      set.delete(settled);
      if (set.size === 0 && this.#pending.get(threadId) === set) this.#pending.delete(threadId);
    });
  }

  /**
   * Resolves when every connection opening on the thread now has settled.
   *
   * @param threadId the thread
   */
  async wait(threadId: string): Promise<void> {
    const set = this.#pending.get(threadId);
    if (set) await Promise.all(set);
  }
}

/** Opens one events connection. */
export type OpenEvents = (signal: AbortSignal) => Promise<Response>;

/** The update stream of a remote subscription. */
export class RemoteUpdates implements AsyncIterableIterator<ThreadUpdate> {
  readonly #open: OpenEvents;
  readonly #threadId: string;
  readonly #gate: SubscribeGate;
  readonly #signal: AbortSignal | undefined;
  readonly #decoder = new TextDecoder();
  readonly #events: EventSourceMessage[] = [];
  readonly #parser = createParser({ onEvent: (event) => this.#events.push(event) });
  #connection: AbortController | undefined;
  #response: Promise<Response> | undefined;
  #reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  #ended = false;

  /**
   * Connects at once, like the in-process service registers at once.
   *
   * @param open opens one events connection
   * @param threadId the thread
   * @param gate where pending connections are announced
   * @param signal the caller's signal: aborting ends the iteration quietly
   */
  constructor(open: OpenEvents, threadId: string, gate: SubscribeGate, signal?: AbortSignal) {
    this.#open = open;
    this.#threadId = threadId;
    this.#gate = gate;
    this.#signal = signal;
    if (signal?.aborted) {
      this.#ended = true;
      return;
    }
    signal?.addEventListener("abort", this.#onAbort, { once: true });
    this.#connect();
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<ThreadUpdate> {
    return this;
  }

  #previous: Promise<unknown> = Promise.resolve();

  /**
   * The next `batch` or `resync`; done when aborted or when the server ends
   * the stream. Overlapping calls are answered one after another in call
   * order, as in-process (two reads at once took the body's reader twice and
   * threw a TypeError).
   */
  next(): Promise<IteratorResult<ThreadUpdate>> {
    const result = this.#previous.then(() => this.#next());
    this.#previous = result.catch(() => {});
    return result;
  }

  async #next(): Promise<IteratorResult<ThreadUpdate>> {
    try {
      for (;;) {
        if (this.#ended) return { done: true, value: undefined };
        const event = this.#events.shift();
        if (event) {
          const update = this.#update(event);
          if (update) return { done: false, value: update };
          continue;
        }
        if (!(await this.#read())) {
          this.#end();
          return { done: true, value: undefined };
        }
      }
    } catch (error) {
      if (this.#ended) return { done: true, value: undefined };
      this.#end();
      throw error;
    }
  }

  /** Ends the iteration and closes the connection. */
  return(): Promise<IteratorResult<ThreadUpdate>> {
    this.#end();
    return Promise.resolve({ done: true, value: undefined });
  }

  #update(event: EventSourceMessage): ThreadUpdate | undefined {
    if (event.event === "batch" || event.event === "resync") {
      let update: ThreadUpdate;
      try {
        update = JSON.parse(event.data) as ThreadUpdate;
      } catch (error) {
        throw new FloretError("internal", "The thread API sent an event that is not JSON", {
          cause: error,
        });
      }
      if (update.type === "resync") this.#reconnect();
      return update;
    }
    return undefined; // `view`, or anything a newer server adds
  }

  /** Reads one chunk; false at the end of the stream. */
  async #read(): Promise<boolean> {
    if (!this.#reader) {
      const response = await this.#response!;
      if (this.#ended) return false;
      if (!response.ok) throw await errorOf(response);
      if (!response.body) return false;
      this.#reader = response.body.getReader();
    }
    const reader = this.#reader;
    let chunk: ReadableStreamReadResult<Uint8Array>;
    try {
      chunk = await reader.read();
    } catch {
      if (this.#ended) return false;
      // The connection broke: the caller must read the view again, as after a resync.
      this.#events.push({ event: "resync", data: '{"type":"resync","reason":"connection lost"}' });
      return true;
    }
    if (chunk.done) return reader === this.#reader ? false : true;
    this.#parser.feed(this.#decoder.decode(chunk.value, { stream: true }));
    return true;
  }

  #connect(): void {
    this.#connection = new AbortController();
    const response = this.#open(this.#connection.signal);
    // Nobody may ever iterate: a failure must not be an unhandled rejection.
    response.catch(() => {});
    this.#response = response;
    this.#reader = undefined;
    this.#parser.reset();
    this.#gate.hold(this.#threadId, response);
  }

  #reconnect(): void {
    const old = this.#reader;
    this.#connection?.abort();
    void old?.cancel().catch(() => {});
    this.#events.length = 0;
    this.#connect();
  }

  readonly #onAbort = (): void => this.#end();

  #end(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#signal?.removeEventListener("abort", this.#onAbort);
    this.#connection?.abort();
    void this.#reader?.cancel().catch(() => {});
    this.#events.length = 0;
  }
}
