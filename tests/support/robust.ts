/**
 * Helpers for robustness tests: a watchdog so a regression fails fast instead
 * of hanging the suite, a store with injectable faults, and gateways that
 * misbehave on purpose.
 */
import assert from "node:assert/strict";
import {
  FloretError,
  type Gateway,
  type KvCommit,
  type KvKey,
  type KvStore,
  memoryStore,
  type ProviderEvent,
  type ProviderRequest,
} from "@floret/engine";

/**
 * Options for the test runner: Bun's own limit for node:test files is 5 s,
 * too short on a loaded machine; each test's watchdog fails sooner and says why.
 */
export const TIMEOUT: { timeout: number } = { timeout: 60_000 };

/** Runs `body`, failing the test when it does not finish within `ms`. */
export async function watchdog<T>(ms: number, body: () => Promise<T>, what = "test"): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`Watchdog: ${what} did not finish in ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([body(), expired]);
  } finally {
    clearTimeout(timer);
  }
}

/** Asserts that `promise` rejects with a FloretError of `code`. */
export async function rejectsWith(
  promise: Promise<unknown> | (() => unknown),
  code: string,
): Promise<FloretError> {
  let caught: unknown;
  try {
    await (typeof promise === "function" ? promise() : promise);
  } catch (error) {
    caught = error;
  }
  assert.ok(caught !== undefined, `expected a rejection with ${code}, got success`);
  assert.ok(
    caught instanceof FloretError,
    `expected a FloretError ${code}, got ${String(caught)} (${
      (caught as object)?.constructor?.name
    })`,
  );
  assert.equal(caught.code, code, `expected ${code}, got ${caught.code}: ${caught.message}`);
  return caught;
}

/** The faults a {@link FaultyStore} can inject; each counts down per commit. */
export interface Faults {
  /** The next N commits throw before reaching the store. */
  throwCommits: number;
  /** The next N commits answer `{ ok: false }` without writing. */
  staleCommits: number;
  /** The next N commits land, then throw (the reply is lost). */
  loseReplies: number;
  /** Commits never answer while set. */
  hangCommits: boolean;
  /** Every read throws while set. */
  readsFail: boolean;
  /** `close()` throws. */
  closeThrows: boolean;
}

/** A memory store with faults switched on and off by the test. */
export interface FaultyStore extends KvStore {
  readonly faults: Faults;
  readonly inner: KvStore;
  /** Commits made (landed), all kinds. */
  readonly landed: number;
  /** Commits asked for, faulted or not. */
  readonly attempts: number;
  /** Overwrites a stored value with raw bytes (for shape tests). */
  poke(key: KvKey, bytes: Uint8Array): Promise<void>;
}

/** Wraps a memory store with injectable faults. */
export function faultyStore(inner: KvStore = memoryStore()): FaultyStore {
  const faults: Faults = {
    throwCommits: 0,
    staleCommits: 0,
    loseReplies: 0,
    hangCommits: false,
    readsFail: false,
    closeThrows: false,
  };
  let landed = 0;
  let attempts = 0;
  const read = <T>(op: () => Promise<T>): Promise<T> =>
    faults.readsFail ? Promise.reject(new Error("injected read failure")) : op();
  return {
    faults,
    inner,
    get landed() {
      return landed;
    },
    get attempts() {
      return attempts;
    },
    getMany: (keys) => read(() => inner.getMany(keys)),
    list: (selector, options) => read(() => inner.list(selector, options)),
    async commit(op: KvCommit) {
      attempts++;
      if (faults.hangCommits) return await new Promise<never>(() => {});
      // A faulted commit yields a macrotask, so a watchdog can still fire
      // when the engine loops on faults.
      if (faults.throwCommits > 0 || faults.staleCommits > 0) {
        await new Promise((resolve) => setTimeout(resolve, 0));
      }
      if (faults.throwCommits > 0) {
        faults.throwCommits--;
        throw new Error("injected commit failure");
      }
      if (faults.staleCommits > 0) {
        faults.staleCommits--;
        return { ok: false } as const;
      }
      const result = await inner.commit(op);
      if (result.ok) landed++;
      if (faults.loseReplies > 0 && result.ok) {
        faults.loseReplies--;
        throw new Error("injected lost reply");
      }
      return result;
    },
    // The memory store stays open, so a test can open another host on the same data.
    close() {
      return faults.closeThrows
        ? Promise.reject(new Error("injected close failure"))
        : Promise.resolve();
    },
    async poke(key, bytes) {
      const [entry] = await inner.getMany([key]);
      const result = await inner.commit({
        checks: [{ key, version: entry?.version ?? null }],
        set: [{ key, value: bytes }],
      });
      assert.ok(result.ok);
    },
  };
}

/** What a hand-written gateway does in one attempt. */
export type Misbehaviour =
  /** Never yields and ignores the abort signal. */
  | { kind: "deaf" }
  /** Yields these events, each after `delayMs`, ignoring the abort signal. */
  | { kind: "late"; events: ProviderEvent[]; delayMs: number }
  /** Yields these events at once. */
  | { kind: "events"; events: ProviderEvent[] };

/** A gateway that plays one misbehaviour per attempt (the last one repeats). */
export function misbehavingGateway(
  plays: Misbehaviour[],
  info: Partial<Gateway["info"]> | null = {},
): Gateway & MisbehavingCounts {
  const state = { attempts: 0, lateYields: 0, reads: 0, requests: [] as ProviderRequest[] };
  const gateway = {
    get attempts() {
      return state.attempts;
    },
    get lateYields() {
      return state.lateYields;
    },
    get reads() {
      return state.reads;
    },
    requests: state.requests,
    info: info === null ? undefined : {
      provider: "misbehaving",
      model: "misbehaving-model",
      stateKey: "misbehaving",
      capabilities: {},
      ...info,
    },
    stream(request: ProviderRequest): AsyncIterable<ProviderEvent> {
      state.requests.push(request);
      const play = plays[Math.min(state.attempts, plays.length - 1)];
      state.attempts++;
      return {
        [Symbol.asyncIterator]() {
          let index = 0;
          return {
            next(): Promise<IteratorResult<ProviderEvent>> {
              state.reads++;
              if (play.kind === "deaf") return new Promise(() => {});
              const event = play.events[index++];
              const result: IteratorResult<ProviderEvent> = event === undefined
                ? { done: true, value: undefined }
                : { done: false, value: event };
              if (play.kind === "events") return Promise.resolve(result);
              return new Promise((resolve) =>
                setTimeout(() => {
                  if (!result.done) state.lateYields++;
                  resolve(result);
                }, play.delayMs)
              );
            },
          };
        },
      };
    },
  };
  return gateway as unknown as Gateway & MisbehavingCounts;
}

/** What a misbehaving gateway counts. */
export interface MisbehavingCounts {
  /** Streams asked for. */
  attempts: number;
  requests: ProviderRequest[];
  /** Events a `late` play has yielded (after their delay). */
  lateYields: number;
  /** `next()` calls on its streams: how far the engine has read. */
  reads: number;
}

/** The events of one tool call, for hand-written gateway scripts. */
export function callEvents(callId: string, name: string, args: string): ProviderEvent[] {
  return [
    { type: "tool-call-start", callId, name },
    { type: "tool-call-delta", callId, argumentsDelta: args },
    { type: "tool-call-end", callId },
  ];
}

/** A final answer's events. */
export function answerEvents(text: string): ProviderEvent[] {
  return [{ type: "text", delta: text }, { type: "finish", reason: "stop" }];
}
