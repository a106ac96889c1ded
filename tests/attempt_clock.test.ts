// The attempts' timeouts share one timer: a clock with a nearer deadline than
// the running ones still times out, a clock whose output moved its deadline
// waits for the new one, and a stopped clock never fires.
import { test } from "node:test";
import assert from "node:assert/strict";
import { AttemptClock } from "../src/engine/attempt/attempt_clock.ts";
import type { ProviderError } from "../src/provider/provider_error.ts";

const LONG = 60_000;

/** A target that remembers its abort, and a promise of it. */
function target(): { abort(reason: unknown): void; aborted: Promise<ProviderError> } {
  let tell!: (reason: ProviderError) => void;
  const aborted = new Promise<ProviderError>((resolve) => tell = resolve);
  return { abort: (reason) => tell(reason as ProviderError), aborted };
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

test("a clock due before the running ones times out while they keep running", async () => {
  const far = new AttemptClock({ firstOutputMs: LONG, betweenOutputsMs: LONG, attemptMs: LONG }, {
    abort: () => assert.fail("the far clock must not time out"),
  });
  const near = target();
  const clock = new AttemptClock(
    { firstOutputMs: 20, betweenOutputsMs: LONG, attemptMs: LONG },
    near,
  );
  const error = await near.aborted;
  assert.equal(error, clock.timedOut);
  assert.equal(error.message, "Provider request timed out: no output in 20 ms");
  assert.equal(error.retry, "timeout");
  assert.equal(far.timedOut, undefined);
  far.stop();
});

test("output moves the idle deadline on: the attempt limit ends the clock instead", async () => {
  const limit = target();
  const clock = new AttemptClock(
    { firstOutputMs: 10, betweenOutputsMs: LONG, attemptMs: 80 },
    limit,
  );
  clock.tick();
  const error = await limit.aborted;
  assert.equal(error.message, "Provider request timed out: the attempt took 80 ms");
});

test("a stopped clock never times out, and a later one still does", async () => {
  const stopped = new AttemptClock({ firstOutputMs: 5, betweenOutputsMs: 5, attemptMs: 5 }, {
    abort: () => assert.fail("a stopped clock timed out"),
  });
  stopped.stop();
  stopped.stop(); // twice is once
  await pause(30);
  assert.equal(stopped.timedOut, undefined);
  const later = target();
  new AttemptClock({ firstOutputMs: 5, betweenOutputsMs: LONG, attemptMs: LONG }, later);
  assert.match((await later.aborted).message, /no output in 5 ms/);
});

test("a limit already passed times out at once, before the constructor returns", () => {
  let heard: unknown;
  const clock = new AttemptClock({ firstOutputMs: 0, betweenOutputsMs: 0, attemptMs: 0 }, {
    abort: (reason) => heard = reason,
  });
  assert.equal(heard, clock.timedOut);
  assert.match(clock.timedOut!.message, /the attempt took 0 ms/);
});
