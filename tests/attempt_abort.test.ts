// One provider attempt's abort switch: the gateway's signal is made only when
// read, and it says the same as an eagerly made one would.
import { test } from "node:test";
import assert from "node:assert/strict";
import { AttemptAbort } from "../src/engine/attempt/attempt_abort.ts";

test("the signal read before the abort is aborted by it, with its reason, before the watcher hears", () => {
  const attempt = new AttemptAbort();
  const heard: string[] = [];
  const signal = attempt.options.signal;
  assert.equal(signal, attempt.signal);
  assert.equal(signal.aborted, false);
  signal.addEventListener("abort", () => heard.push(`signal ${String(signal.reason)}`));
  attempt.onAbort((reason) => heard.push(`watcher ${String(reason)}`));
  attempt.abort("first");
  attempt.abort("second");
  assert.equal(attempt.aborted, true);
  assert.equal(attempt.reason, "first");
  assert.equal(signal.reason, "first");
  assert.deepEqual(heard, ["signal first", "watcher first"]);
});

test("a signal first read after the abort is already aborted with its reason", () => {
  const attempt = new AttemptAbort();
  const reason = new Error("timed out");
  attempt.abort(reason);
  const { signal } = attempt.options;
  assert.equal(signal.aborted, true);
  assert.equal(signal.reason, reason);
  assert.equal({ ...attempt.options }.signal, signal);
});

test("an attempt nobody aborts leaves its signal alone and tells no watcher", () => {
  const attempt = new AttemptAbort();
  let heard = 0;
  attempt.onAbort(() => heard++);
  assert.equal(attempt.aborted, false);
  assert.equal(attempt.reason, undefined);
  assert.equal(attempt.options.signal.aborted, false);
  assert.equal(heard, 0);
});
