// Watching the engine's own abort signals without an EventTarget listener per watcher.
import { test } from "node:test";
import assert from "node:assert/strict";
import { unwatchAbort, watchAbort } from "../src/tools/abort_watch.ts";
import { untilRunAborted } from "../src/tools/until_aborted.ts";

test("every watcher still watching is told once, in order; an unwatched one is not", () => {
  const controller = new AbortController();
  const heard: string[] = [];
  const first = (): void => void heard.push(`first ${String(controller.signal.reason)}`);
  const second = (): void => void heard.push("second");
  const gone = (): void => void heard.push("gone");
  watchAbort(controller.signal, first);
  watchAbort(controller.signal, gone);
  watchAbort(controller.signal, second);
  watchAbort(controller.signal, first); // the same callback twice is one watcher
  unwatchAbort(controller.signal, gone);
  controller.abort("why");
  controller.abort("again");
  assert.deepEqual(heard, ["first why", "second"]);
});

test("a signal watched again after all its watchers left still tells the new one", () => {
  const controller = new AbortController();
  let heard = 0;
  const early = (): void => void heard++;
  watchAbort(controller.signal, early);
  unwatchAbort(controller.signal, early);
  const late = (): void => void (heard += 10);
  watchAbort(controller.signal, late);
  controller.abort();
  assert.equal(heard, 10);
});

test("untilRunAborted settles like the work, or rejects with the reason once the signal aborts", async () => {
  const controller = new AbortController();
  assert.equal(await untilRunAborted(Promise.resolve(7), controller.signal), 7);
  await assert.rejects(
    untilRunAborted(Promise.reject(new Error("work")), controller.signal),
    /work/,
  );
  const never = new Promise<never>(() => {});
  const bounded = untilRunAborted(never, controller.signal);
  controller.abort(new Error("stopped"));
  await assert.rejects(bounded, /stopped/);
  await assert.rejects(untilRunAborted(Promise.resolve(1), controller.signal), /stopped/);
});
