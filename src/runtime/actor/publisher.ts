/**
 * Live updates of one thread: view ops are grouped into numbered batches and
 * handed to subscribers. Text growth is coalesced for up to 25 ms; any other
 * change flushes at the end of the current task. A subscriber that falls
 * behind (64 batches or 1 MiB) gets `resync` instead of its backlog.
 *
 * @module
 */
import type { ThreadUpdate, ViewOp } from "../../projection/view/view_types.ts";
import { ownUpdate } from "./update_copy.ts";

/** Limits and timing of live updates (DESIGN.md §7). */
export const UPDATE_LIMITS = { coalesceMs: 25, maxBatches: 64, maxBytes: 1024 * 1024 } as const;

interface Subscriber {
  queue: ThreadUpdate[];
  /** The estimated size of each queued update, by position in `queue`. */
  sizes: number[];
  /** Their sum: what is pending, not what was ever queued (DESIGN §7's 1 MiB). */
  bytes: number;
  wake: (() => void) | undefined;
  ended: boolean;
}

const RESOLVED: Promise<void> = Promise.resolve();

/** Batches and fans out the ops of one thread. */
export class Publisher {
  #version = 0;
  #pending: ViewOp[] = [];
  #timer: ReturnType<typeof setTimeout> | undefined;
  #microtask = false;
  #dirty = false;
  // Made at the first subscriber and dropped with the last: most threads are
  // never watched, and an idle cached actor should not keep an empty set.
  #subscribers: Set<Subscriber> | undefined;

  /** The version of the last flushed batch (the view's `viewVersion`). */
  get version(): number {
    return this.#version;
  }

  /** Whether anyone is listening. */
  get hasSubscribers(): boolean {
    return this.#subscribers !== undefined;
  }

  /** Queues one op; text appends wait up to 25 ms, everything else flushes after this task. */
  push(op: ViewOp): void {
    this.#pending.push(op);
    if (op.op === "append-text") {
      this.#timer ??= setTimeout(() => this.flush(), UPDATE_LIMITS.coalesceMs);
    } else if (!this.#microtask) {
      this.#microtask = true;
      RESOLVED.then(this.#flushTask);
    }
  }

  /**
   * Publishes ops built only when someone listens: with no subscriber the
   * flush would drop them, so only the version moves (see {@link touch}).
   *
   * `make` takes its input as an argument, so callers pass a module-level
   * function and make no closure when nobody listens (several times a step).
   *
   * @param make builds the ops from `from`, called at once or not at all
   * @param from what the ops are built from
   */
  pushHeard<T>(make: (from: T) => readonly ViewOp[], from: T): void {
    if (this.#subscribers === undefined) return this.touch();
    for (const op of make(from)) this.push(op);
  }

  /** Records a change without an op (nobody listens): the next flush still moves the version. */
  touch(): void {
    this.#dirty = true;
    if (!this.#microtask) {
      this.#microtask = true;
      RESOLVED.then(this.#flushTask);
    }
  }

  // The end-of-task flush, queued once per batch: a reaction to a settled
  // promise is the same microtask as `queueMicrotask` without what Node builds
  // around each of those (an async resource and a bound function), and this
  // runs several times per step. A throw still surfaces as an uncaught
  // exception, as from `queueMicrotask`, not as a rejection. Made by a module
  // function: under tsx (esbuild keepNames) an arrow field is wrapped to name
  // it, which every thread's publisher would pay.
  readonly #flushTask = flushTaskOf(this);

  /** Publishes pending ops as one batch now. */
  flush(): void {
    this.#microtask = false;
    if (this.#timer !== undefined) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
    }
    if (this.#pending.length === 0 && !this.#dirty) return;
    this.#dirty = false;
    const ops = this.#pending;
    // Nobody listening (the usual case) leaves nothing pending: the empty list is kept.
    if (ops.length > 0) this.#pending = [];
    const baseVersion = this.#version++;
    const subscribers = this.#subscribers;
    if (subscribers === undefined) return;
    const batch: ThreadUpdate = {
      type: "batch",
      baseVersion,
      version: this.#version,
      ops: coalesce(ops),
    };
    const size = estimateBytes(ops);
    for (const subscriber of subscribers) this.#deliver(subscriber, batch, size);
  }

  /** Registers a subscriber now and returns its update stream. */
  subscribe(signal?: AbortSignal): AsyncIterableIterator<ThreadUpdate> {
    const subscriber: Subscriber = {
      queue: [],
      sizes: [],
      bytes: 0,
      wake: undefined,
      ended: false,
    };
    (this.#subscribers ??= new Set()).add(subscriber);
    const end = (): void => {
      subscriber.ended = true;
      if (this.#subscribers?.delete(subscriber) && this.#subscribers.size === 0) {
        this.#subscribers = undefined;
      }
      subscriber.wake?.();
    };
    // The caller's abort ends the iteration at once (DESIGN §8 "promptly"), as
    // `return()` and the HTTP client's abort do: its backlog is dropped, not
    // handed out first. (A shutdown's `close` keeps it: those batches are the
    // thread's last.)
    const abort = (): void => {
      end();
      subscriber.queue.length = 0;
      subscriber.sizes.length = 0;
    };
    // An already aborted signal never fires "abort": end at once, or the loop waits forever.
    if (signal?.aborted) abort();
    else signal?.addEventListener("abort", abort, { once: true });
    const read = async (): Promise<IteratorResult<ThreadUpdate>> => {
      while (subscriber.queue.length === 0 && !subscriber.ended) {
        await new Promise<void>((resolve) => (subscriber.wake = resolve));
        subscriber.wake = undefined;
      }
      const update = subscriber.queue.shift();
      if (update === undefined) return { done: true, value: undefined };
      // A reader that keeps up stays under the limit however much it reads in all.
      subscriber.bytes -= subscriber.sizes.shift() ?? 0;
      // Every subscriber gets the same batch: each reads its own copy (see update_copy.ts).
      return { done: false, value: ownUpdate(update) };
    };
    // Overlapping next() calls (a `Promise.race` with a timeout, then next()
    // again) are answered one after another in call order, as an async
    // generator answers them: there is one waker per subscriber, and a second
    // waiting call used to replace the first's, which then never settled.
    let previous: Promise<unknown> = RESOLVED;
    const iterator: AsyncIterableIterator<ThreadUpdate> = {
      [Symbol.asyncIterator]: () => iterator,
      next: (): Promise<IteratorResult<ThreadUpdate>> => {
        const result = previous.then(read);
        previous = result.catch(ignore);
        return result;
      },
      return: (): Promise<IteratorResult<ThreadUpdate>> => {
        signal?.removeEventListener("abort", abort);
        end();
        subscriber.queue.length = 0;
        subscriber.sizes.length = 0;
        return Promise.resolve({ done: true, value: undefined });
      },
    };
    return iterator;
  }

  /** Sends `resync` to every subscriber (their view is stale) and keeps them subscribed. */
  resyncAll(reason: string): void {
    this.flush();
    for (const subscriber of this.#subscribers ?? []) {
      subscriber.queue = [{ type: "resync", reason }];
      subscriber.sizes = [0];
      subscriber.bytes = 0;
      subscriber.wake?.();
    }
  }

  /** Ends every subscription (shutdown, delete). */
  close(): void {
    this.flush();
    for (const subscriber of this.#subscribers ?? []) {
      subscriber.ended = true;
      subscriber.wake?.();
    }
    this.#subscribers = undefined;
  }

  #deliver(subscriber: Subscriber, batch: ThreadUpdate, size: number): void {
    const backlogged = subscriber.queue.length >= UPDATE_LIMITS.maxBatches ||
      subscriber.bytes + size > UPDATE_LIMITS.maxBytes;
    if (backlogged) {
      // Its backlog is useless now: it must read the view again anyway.
      if (subscriber.queue[0]?.type !== "resync" || subscriber.queue.length > 1) {
        subscriber.queue = [{ type: "resync", reason: "subscriber fell behind" }];
        subscriber.sizes = [0];
        subscriber.bytes = 0;
      }
    } else {
      subscriber.queue.push(batch);
      subscriber.sizes.push(size);
      subscriber.bytes += size;
    }
    subscriber.wake?.();
  }
}

function ignore(): void {}

/** Merges consecutive appends to one item into one op. */
function coalesce(ops: ViewOp[]): ViewOp[] {
  const out: ViewOp[] = [];
  for (const op of ops) {
    const last = out.at(-1);
    if (op.op === "append-text" && last?.op === "append-text" && last.itemId === op.itemId) {
      out[out.length - 1] = { ...last, text: last.text + op.text };
    } else {
      out.push(op);
    }
  }
  return out;
}

function estimateBytes(ops: ViewOp[]): number {
  let bytes = 0;
  for (const op of ops) {
    bytes += 64;
    if (op.op === "append-text") bytes += op.text.length * 3;
    else if (op.op === "add" || op.op === "replace") {
      bytes += (op.item.text?.length ?? 0) * 3 + (op.item.tool?.output?.length ?? 0) * 3 +
        (op.item.tool?.arguments.length ?? 0);
    }
  }
  return bytes;
}

/** The end-of-task flush of `publisher` (see `Publisher#flushTask`). */
function flushTaskOf(publisher: Publisher): () => void {
  return () => {
    try {
      publisher.flush();
    } catch (error) {
      queueMicrotask(() => {
        throw error;
      });
    }
  };
}
