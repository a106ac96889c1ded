/**
 * Issue 29, clocks: only output resets the between-outputs clock (usage
 * events and empty deltas keep a stream alive but are not output), and after
 * the first output the between-outputs deadline is the one that fires, not
 * the first-output deadline.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  defineAgent,
  type Gateway,
  memoryStore,
  openHost,
  type ProviderEvent,
} from "@floret/engine";
import { AttemptClock } from "../src/engine/attempt/attempt_clock.ts";
import type { ProviderError } from "../src/provider/provider_error.ts";

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** One output, then only keep-alive events (usage, empty deltas) for a while, then a finish. */
function keepAliveGateway(): Gateway {
  return {
    info: { provider: "t", model: "m", stateKey: "t:m", capabilities: {} },
    async *stream(_request, { signal }): AsyncGenerator<ProviderEvent> {
      yield { type: "text", delta: "a" };
      for (let i = 0; i < 40 && !signal.aborted; i++) {
        await pause(25);
        yield i % 2 === 0
          ? { type: "usage", usage: { outputTokens: i } }
          : { type: "text", delta: "" };
      }
      yield { type: "finish", reason: "stop" };
    },
  };
}

test("usage events and empty deltas do not reset the between-outputs clock", async () => {
  const host = await openHost({ store: memoryStore() });
  const threads = host.threads({
    agent: defineAgent({
      id: "a",
      systemPrompt: "s",
      gateway: keepAliveGateway(),
      providerRetry: { disabled: true },
      timeouts: { firstOutputMs: 60_000, betweenOutputsMs: 200 },
    }),
  });
  const { threadId } = await threads.create({ requestKey: "c" });
  await threads.send({ threadId, requestKey: "s", input: { text: "go" } });
  const view = await threads.waitForIdle(threadId, { timeoutMs: 20_000 });
  const turn = view.turns.at(-1)!;
  assert.equal(turn.outcome, "failed");
  assert.equal(turn.failure?.code, "provider_error");
  assert.match(turn.failure!.message, /no output for 200 ms/);
  await host.shutdown();
});

test("after the first output the between-outputs deadline fires, not the first-output one", async () => {
  let tell!: (reason: ProviderError) => void;
  const aborted = new Promise<ProviderError>((resolve) => tell = resolve);
  const clock = new AttemptClock(
    { firstOutputMs: 60_000, betweenOutputsMs: 30, attemptMs: 120_000 },
    { abort: (reason) => tell(reason as ProviderError) },
  );
  clock.tick();
  // Without re-aiming the shared timer, nothing would fire for 60 s.
  const outcome = await Promise.race([aborted, pause(5_000).then(() => "late" as const)]);
  clock.stop();
  assert.notEqual(outcome, "late");
  assert.match((outcome as ProviderError).message, /no output for 30 ms/);
});
