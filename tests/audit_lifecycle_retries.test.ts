// Audit (round 11) of provider retries through the public API: since round
// 10 a request's first attempt runs without an async frame of its own and the
// retries keep "abort check, attempt, retry hook, sleep". What a host sees of
// that — the `provider.attempt` / `provider.retry` observation events, the
// requests the gateway got, the items — must be the same with and without an
// observer, live text of a failed attempt must not survive, a stop during the
// retry sleep must end the run at once, and a context overflow is never a
// transport retry.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import {
  defineAgent,
  type Gateway,
  memoryStore,
  type ObservationEvent,
  openHost,
  ProviderError,
  type ProviderEvent,
  type ProviderRequest,
  type ThreadServiceWave2,
  type ThreadView,
} from "@floret/engine";
import { scriptedGateway, type ScriptStep } from "@floret/engine/testing";
import { TIMEOUT, watchdog } from "./support/robust.ts";

const WATCHDOG_MS = 20_000;

async function open(
  gateway: Gateway,
  options: {
    observe?: boolean;
    delaysMs?: number[];
    maxTimeoutRetries?: number;
    timeouts?: { firstOutputMs?: number; betweenOutputsMs?: number };
  } = {},
) {
  const events: ObservationEvent[] = [];
  const host = await openHost({
    store: memoryStore(),
    onEvent: options.observe === false ? undefined : (event) => events.push(event),
  });
  const threads = host.threads({
    agent: defineAgent({
      id: "audit-retries",
      systemPrompt: "Audit.",
      gateway,
      providerRetry: {
        delaysMs: options.delaysMs ?? [1, 1, 1, 1],
        ...(options.maxTimeoutRetries === undefined
          ? {}
          : { maxTimeoutRetries: options.maxTimeoutRetries }),
      },
      ...(options.timeouts ? { timeouts: options.timeouts } : {}),
    }),
  });
  const { threadId } = await threads.create({ requestKey: "create" });
  return { host, threads, threadId, events };
}

/** The attempt and retry events, as `attempt N` / `retry N`. */
const attemptTrail = (events: ObservationEvent[]): string[] =>
  events.flatMap((event) =>
    event.type === "provider.attempt"
      ? [`attempt ${event.attempt}`]
      : event.type === "provider.retry"
      ? [`retry ${event.attempt}`]
      : []
  );

const texts = (view: ThreadView) =>
  view.items.filter((item) => item.kind === "assistant").map((item) => item.text);

/** A gateway that streams `partial` text and then fails retryably, `failures` times, then answers. */
function flakyStreamingGateway(failures: number, partial: string, answer: string) {
  const requests: ProviderRequest[] = [];
  let calls = 0;
  const gateway: Gateway = {
    info: { provider: "flaky", model: "m", stateKey: "flaky:m", capabilities: {} },
    async *stream(request): AsyncIterable<ProviderEvent> {
      requests.push(structuredClone(request));
      const n = ++calls;
      if (n <= failures) {
        yield { type: "text", delta: `${partial} ${n}` };
        await new Promise((resolve) => setTimeout(resolve, 5));
        throw new ProviderError("connection reset", {
          retry: "retryable",
          kind: "stream_interrupted",
        });
      }
      yield { type: "text", delta: answer };
      yield { type: "finish", reason: "stop" };
    },
  };
  return { gateway, requests };
}

/**
 * Attempt by attempt: `deaf` never answers and ignores its signal; `stall` streams a
 * text delta, then never answers; `answer` completes.
 */
function stallingGateway(plays: ("deaf" | "stall" | "answer")[]) {
  let attempts = 0;
  const gateway: Gateway = {
    info: { provider: "stalling", model: "m", stateKey: "stalling:m", capabilities: {} },
    stream(): AsyncIterable<ProviderEvent> {
      const play = plays[Math.min(attempts++, plays.length - 1)];
      const events: ProviderEvent[] = play === "answer"
        ? [{ type: "text", delta: "answered" }, { type: "finish", reason: "stop" }]
        : play === "stall"
        ? [{ type: "text", delta: "stalled text" }]
        : [];
      let index = 0;
      return {
        [Symbol.asyncIterator]: () => ({
          next(): Promise<IteratorResult<ProviderEvent>> {
            const event = events[index++];
            if (event === undefined) {
              return play === "answer"
                ? Promise.resolve({ done: true, value: undefined })
                : new Promise(() => {});
            }
            return Promise.resolve({ done: false, value: event });
          },
        }),
      };
    },
  };
  return { gateway, attempts: () => attempts };
}

describe("audit lifecycle: provider retries", () => {
  test(
    "attempts that time out on a gateway ignoring its signal are retried as timeouts, then it answers",
    TIMEOUT,
    async () => {
      await watchdog(WATCHDOG_MS, async () => {
        const { gateway, attempts } = stallingGateway(["deaf", "stall", "answer"]);
        const { host, threads, threadId, events } = await open(gateway, {
          timeouts: { firstOutputMs: 40, betweenOutputsMs: 40 },
        });
        try {
          await threads.send({ threadId, requestKey: "s", input: { text: "go" } });
          const view = await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
          assert.equal(view.turns.at(-1)?.outcome, "completed");
          assert.equal(attempts(), 3);
          assert.deepEqual(texts(view), ["answered"]);
          assert.equal(view.items.some((item) => item.text?.includes("stalled")), false);
          assert.deepEqual(attemptTrail(events), [
            "attempt 1",
            "retry 1",
            "attempt 2",
            "retry 2",
            "attempt 3",
          ]);
          const retries = events.filter((event) => event.type === "provider.retry");
          assert.deepEqual(retries.map((event) => event.retry), ["timeout", "timeout"]);
        } finally {
          await host.shutdown();
        }
      });
    },
  );

  for (const observe of [true, false]) {
    test(
      `retryable errors then success (${
        observe ? "observed" : "unobserved"
      }): one answer, same fingerprint`,
      TIMEOUT,
      async () => {
        await watchdog(WATCHDOG_MS, async () => {
          const gateway = scriptedGateway([
            { error: { status: 503, retry: "retryable", message: "busy" } },
            { error: { status: 429, retry: "retryable", message: "slow down" } },
            { text: "finally" },
          ]);
          const { host, threads, threadId, events } = await open(gateway, { observe });
          try {
            await threads.send({ threadId, requestKey: "s", input: { text: "go" } });
            const view = await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
            assert.equal(view.turns.at(-1)?.outcome, "completed");
            assert.deepEqual(texts(view), ["finally"]);
            assert.equal(gateway.requests.length, 3);
            assert.equal(new Set(gateway.requests.map((r) => r.fingerprint)).size, 1);
            if (observe) {
              assert.deepEqual(attemptTrail(events), [
                "attempt 1",
                "retry 1",
                "attempt 2",
                "retry 2",
                "attempt 3",
              ]);
              const retries = events.filter((event) => event.type === "provider.retry");
              assert.deepEqual(retries.map((event) => event.status), [503, 429]);
              assert.ok(retries.every((event) => event.threadId === threadId));
            }
          } finally {
            await host.shutdown();
          }
        });
      },
    );
  }

  test(
    "text streamed by a failed attempt is dropped: the item shows the successful attempt only",
    TIMEOUT,
    async () => {
      await watchdog(WATCHDOG_MS, async () => {
        const { gateway, requests } = flakyStreamingGateway(2, "partial", "whole answer");
        const { host, threads, threadId, events } = await open(gateway);
        try {
          const seen: string[] = [];
          const ended = new AbortController();
          const watching = (async () => {
            for await (const update of threads.subscribe(threadId, { signal: ended.signal })) {
              seen.push(JSON.stringify(update));
            }
          })();
          await threads.send({ threadId, requestKey: "s", input: { text: "go" } });
          const view = await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
          ended.abort();
          await watching;
          assert.equal(requests.length, 3);
          assert.deepEqual(texts(view), ["whole answer"]);
          assert.equal(view.items.some((item) => item.live), false);
          assert.deepEqual(attemptTrail(events), [
            "attempt 1",
            "retry 1",
            "attempt 2",
            "retry 2",
            "attempt 3",
          ]);
          // A restart reads the same: no trace of the failed attempts' text.
          const reread = await threads.history(threadId, { limit: 50 });
          assert.equal(reread.items.some((item) => item.text?.includes("partial")), false);
          assert.ok(seen.length > 0, "the subscriber saw the turn");
        } finally {
          await host.shutdown();
        }
      });
    },
  );

  test(
    "timeouts are retried at most maxTimeoutRetries times; then the turn fails provider_error",
    TIMEOUT,
    async () => {
      await watchdog(WATCHDOG_MS, async () => {
        const timeouts: ScriptStep[] = Array.from({ length: 4 }, () => ({
          error: { retry: "timeout" as const, message: "timed out" },
        }));
        const gateway = scriptedGateway([...timeouts, { text: "too late" }]);
        const { host, threads, threadId, events } = await open(gateway, { maxTimeoutRetries: 2 });
        try {
          await threads.send({ threadId, requestKey: "s", input: { text: "go" } });
          const view = await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
          assert.equal(gateway.requests.length, 3, "one attempt and two timeout retries");
          assert.equal(view.turns.at(-1)?.failure?.code, "provider_error");
          assert.deepEqual(attemptTrail(events), [
            "attempt 1",
            "retry 1",
            "attempt 2",
            "retry 2",
            "attempt 3",
          ]);
        } finally {
          await host.shutdown();
        }
      });
    },
  );

  test("a context overflow marked retryable is never retried as transport", TIMEOUT, async () => {
    await watchdog(WATCHDOG_MS, async () => {
      const gateway = scriptedGateway([
        { error: { retry: "retryable", kind: "context_overflow", message: "too long" } },
        { text: "summary" },
        { error: { retry: "retryable", kind: "context_overflow", message: "too long" } },
        { text: "never" },
        { text: "never" },
      ]);
      const { host, threads, threadId, events } = await open(gateway);
      try {
        await threads.send({ threadId, requestKey: "s", input: { text: "go" } });
        const view = await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
        assert.equal(view.turns.at(-1)?.outcome, "failed");
        assert.equal(view.turns.at(-1)?.failure?.code, "context_compaction_limit");
        assert.equal(events.filter((event) => event.type === "provider.retry").length, 0);
        assert.ok(gateway.requests.length <= 3, `${gateway.requests.length} requests`);
        assert.deepEqual(texts(view), []);
      } finally {
        await host.shutdown();
      }
    });
  });

  for (const stop of ["cancel", "delete"] as const) {
    test(
      `${stop} during the retry sleep ends the run: no further attempt, the thread is usable`,
      TIMEOUT,
      async () => {
        await watchdog(WATCHDOG_MS, async () => {
          const gateway = scriptedGateway([
            { error: { status: 503, retry: "retryable", message: "busy" } },
            { text: "must not be requested by the stopped run" },
            { text: "second turn" },
          ]);
          // A long sleep: a stop that did not end it would leave the run alive.
          const { host, threads, threadId, events } = await open(gateway, {
            delaysMs: [60_000],
          });
          try {
            await threads.send({ threadId, requestKey: "s", input: { text: "go" } });
            for (let i = 0; i < 4000 && !events.some((e) => e.type === "provider.retry"); i++) {
              await new Promise((resolve) => setTimeout(resolve, 5));
            }
            assert.deepEqual(attemptTrail(events), ["attempt 1", "retry 1"]);
            const view = await threads.view(threadId);
            assert.equal(view.status, "running");
            if (stop === "delete") {
              await threads.delete({ threadId, requestKey: "del" });
              await assert.rejects(threads.view(threadId), { code: "thread_not_found" });
              assert.equal(gateway.requests.length, 1);
              return;
            }
            const { view: cancelled } = await threads.cancel({ threadId, requestKey: "stop" });
            assert.equal(cancelled.turns.at(-1)?.outcome, "cancelled");
            assert.notEqual(cancelled.status, "running");
            const next = await threads.send({
              threadId,
              requestKey: "s2",
              input: { text: "again" },
            });
            assert.equal(next.queued, false);
            const done = await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
            assert.equal(done.turns.at(-1)?.outcome, "completed");
            // The stopped run never made its second attempt: the new turn got the next step.
            assert.equal(gateway.requests.length, 2);
            assert.deepEqual(texts(done), ["must not be requested by the stopped run"]);
            assert.deepEqual(attemptTrail(events), ["attempt 1", "retry 1", "attempt 1"]);
          } finally {
            await host.shutdown();
          }
        });
      },
    );
  }

  test(
    "a steer during the retry sleep ends the wait: the next request carries it at once",
    TIMEOUT,
    async () => {
      await watchdog(WATCHDOG_MS, async () => {
        const gateway = scriptedGateway([
          { error: { status: 503, retry: "retryable", message: "busy" } },
          { text: "after steer" },
        ]);
        // A 60 s sleep: a steer that did not end it would leave the test waiting past its watchdog.
        const { host, threads, threadId, events } = await open(gateway, { delaysMs: [60_000] });
        try {
          await threads.send({ threadId, requestKey: "s", input: { text: "go" } });
          for (let i = 0; i < 4000 && !events.some((e) => e.type === "provider.retry"); i++) {
            await new Promise((resolve) => setTimeout(resolve, 5));
          }
          await (threads as unknown as ThreadServiceWave2).steer({
            threadId,
            requestKey: "steer",
            text: "steer now",
          });
          const view = await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
          assert.equal(view.turns.at(-1)?.outcome, "completed");
          assert.deepEqual(view.items.map((item) => item.text), ["go", "steer now", "after steer"]);
          assert.equal(gateway.requests.length, 2);
          const last = gateway.requests[1].messages.at(-1);
          assert.equal(last?.role === "user" ? last.text : undefined, "steer now");
          assert.deepEqual(attemptTrail(events), ["attempt 1", "retry 1", "attempt 1"]);
        } finally {
          await host.shutdown();
        }
      });
    },
  );

  test(
    "shutdown during the retry sleep returns; a new host finds the turn interrupted and retry completes it",
    TIMEOUT,
    async () => {
      await watchdog(WATCHDOG_MS, async () => {
        const inner = memoryStore();
        const store = { ...inner, close: () => Promise.resolve() };
        const events: ObservationEvent[] = [];
        const gateway = scriptedGateway([
          { error: { status: 503, retry: "retryable", message: "busy" } },
          { text: "after restart" },
        ]);
        const agent = defineAgent({
          id: "audit-retries",
          systemPrompt: "Audit.",
          gateway,
          providerRetry: { delaysMs: [60_000] },
        });
        const host = await openHost({ store, onEvent: (event) => events.push(event) });
        const threads = host.threads({ agent });
        const { threadId } = await threads.create({ requestKey: "create" });
        await threads.send({ threadId, requestKey: "s", input: { text: "go" } });
        for (let i = 0; i < 4000 && !events.some((e) => e.type === "provider.retry"); i++) {
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
        const controller = new AbortController();
        setTimeout(() => controller.abort(), 2_000);
        await host.shutdown({ signal: controller.signal });
        assert.equal(gateway.requests.length, 1);
        const again = await openHost({ store });
        try {
          const service = again.threads({ agent });
          const view = await service.view(threadId);
          assert.equal(view.status, "idle");
          assert.equal(view.turns.at(-1)?.outcome, "interrupted");
          await service.retry({ threadId, requestKey: "r" });
          const done = await service.waitForIdle(threadId, { timeoutMs: 10_000 });
          assert.equal(done.turns.at(-1)?.outcome, "completed");
          assert.deepEqual(texts(done), ["after restart"]);
        } finally {
          await again.shutdown();
        }
      });
    },
  );
});
