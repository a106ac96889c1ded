/**
 * Unknown fields in a command's input are `invalid_input` in process, as over
 * HTTP: a typo (`mdoe`, `limt`) or a field the command does not take
 * (`threadId` on create) is refused and changes nothing.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { isFloretError } from "@floret/engine";
import { engine } from "./support/engine.ts";

const invalid = (name: string) => (error: unknown): boolean =>
  isFloretError(error) && error.code === "invalid_input" && error.message.includes(name);

test("unknown fields are invalid_input in process, fast paths included", async () => {
  const e = await engine([{ text: "ok" }]);
  const { threads, threadId } = e;
  const bad = { threadId: "user-42" } as object;
  await assert.rejects(threads.create({ requestKey: "k1", ...bad } as never), invalid("threadId"));
  await assert.rejects(
    threads.create({ requestKey: "k2", title: "T", colour: "red" } as never),
    invalid("colour"),
  );
  await assert.rejects(
    threads.send({ threadId, requestKey: "s", input: { text: "hi" }, mdoe: "x" } as never),
    invalid("mdoe"),
  );
  await assert.rejects(
    threads.send({ threadId, requestKey: "s", input: { text: "hi", txet: "x" } } as never),
    invalid("txet"),
  );
  await assert.rejects(
    threads.cancel({ threadId, requestKey: "c", mdoe: "graceful" } as never),
    invalid("mdoe"),
  );
  await assert.rejects(threads.list({ limt: 5 } as never), invalid("limt"));
  await assert.rejects(threads.history(threadId, { limt: 5 } as never), invalid("limt"));
  // Nothing was accepted: the request keys are still free and the thread is untouched.
  const { threadId: created } = await threads.create({ requestKey: "k1" });
  assert.notEqual(created, "user-42");
  assert.equal((await threads.view(threadId)).turns.length, 0);
  await threads.send({ threadId, requestKey: "s", input: { text: "hi" } });
  assert.equal((await threads.waitForIdle(threadId)).turns.length, 1);
  await e.host.shutdown();
});
