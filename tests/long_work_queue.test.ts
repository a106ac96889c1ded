/**
 * Queue control of long work (DESIGN §11): `steerQueued` turns a queued input
 * into a steer of the running turn in one commit; `deleteQueued` checks an
 * optional `expectedText`; `editQueued` may replace attachments.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  FloretError,
  type ImageAttachment,
  type LocalThreadService,
  type ProviderRequest,
} from "@floret/engine";
import { engine, type TestEngine } from "./support/engine.ts";

const local = (e: TestEngine): LocalThreadService => e.threads as LocalThreadService;
const image: ImageAttachment = {
  type: "image",
  mediaType: "image/png",
  dataBase64: "iVBORw0KGgo=",
};
const isCode = (code: string) => (error: unknown) =>
  error instanceof FloretError && error.code === code;

function userTexts(request: ProviderRequest): string[] {
  return request.messages.flatMap((m) => m.role === "user" ? [m.text] : []);
}

/** A thread whose first turn hangs, with one queued input. */
async function busyWithQueued(steps: Parameters<typeof engine>[0] = [{ hang: true }, {
  text: "steered answer",
}]) {
  const e = await engine(steps);
  await e.threads.send({ threadId: e.threadId, requestKey: "first", input: { text: "long job" } });
  const queued = await e.threads.send({
    threadId: e.threadId,
    requestKey: "second",
    input: { text: "also do this" },
  });
  assert.equal(queued.queued, true);
  return { e, queueId: queued.view.queue[0].id };
}

test("steerQueued moves a queued input into the running turn: out of the queue, into the next request", async () => {
  const { e, queueId } = await busyWithQueued();
  try {
    const { view } = await local(e).steerQueued({
      threadId: e.threadId,
      requestKey: "sq",
      queueId,
      expectedText: "also do this",
    });
    assert.equal(view.queue.length, 0, "no longer queued");
    const done = await e.threads.waitForIdle(e.threadId, { timeoutMs: 10_000 });
    assert.equal(done.turns.length, 1, "it joined the turn instead of starting one");
    assert.equal(done.turns[0].outcome, "completed");
    assert.deepEqual(userTexts(e.gateway.requests.at(-1)!), ["long job", "also do this"]);
    const users = done.items.filter((item) => item.kind === "user").map((item) => item.text);
    assert.deepEqual(users, ["long job", "also do this"]);
    // A replay answers from the key and steers nothing more.
    const again = await local(e).steerQueued({
      threadId: e.threadId,
      requestKey: "sq",
      queueId,
      expectedText: "also do this",
    });
    assert.equal(again.view.turns.length, 1);
  } finally {
    await e.host.shutdown();
  }
});

test("steerQueued refuses a changed text, an unknown id and an idle thread, changing nothing", async () => {
  const { e, queueId } = await busyWithQueued();
  try {
    await assert.rejects(
      local(e).steerQueued({ threadId: e.threadId, requestKey: "a", queueId, expectedText: "old" }),
      isCode("request_conflict"),
    );
    await assert.rejects(
      local(e).steerQueued({
        threadId: e.threadId,
        requestKey: "b",
        queueId: "queued_nope",
        expectedText: "x",
      }),
      isCode("invalid_input"),
    );
    await assert.rejects(
      local(e).steerQueued({
        threadId: e.threadId,
        requestKey: "c",
        queueId,
        expectedText: "also do this",
        extra: true,
      } as never),
      isCode("invalid_input"),
    );
    assert.equal((await e.threads.view(e.threadId)).queue.length, 1);
    await e.threads.cancel({ threadId: e.threadId, requestKey: "stop" });
  } finally {
    await e.host.shutdown();
  }
});

test("deleteQueued with expectedText removes only what the user saw", async () => {
  const { e, queueId } = await busyWithQueued();
  try {
    await assert.rejects(
      e.threads.deleteQueued({
        threadId: e.threadId,
        requestKey: "d1",
        queueId,
        expectedText: "something else",
      } as never),
      isCode("request_conflict"),
    );
    assert.equal((await e.threads.view(e.threadId)).queue.length, 1);
    const { view } = await local(e).deleteQueued({
      threadId: e.threadId,
      requestKey: "d2",
      queueId,
      expectedText: "also do this",
    });
    assert.equal(view.queue.length, 0);
    await e.threads.cancel({ threadId: e.threadId, requestKey: "stop" });
  } finally {
    await e.host.shutdown();
  }
});

test("editQueued may replace attachments; the promoted turn carries them", async () => {
  const { e, queueId } = await busyWithQueued([{ hang: true }, { text: "saw it" }]);
  try {
    await local(e).editQueued({
      threadId: e.threadId,
      requestKey: "e1",
      queueId,
      text: "look at this",
      expectedText: "also do this",
      attachments: [image],
    });
    await assert.rejects(
      local(e).editQueued({
        threadId: e.threadId,
        requestKey: "e2",
        queueId,
        text: "x",
        expectedText: "look at this",
        attachments: [{ type: "image", mediaType: "image/tiff", dataBase64: "AA==" } as never],
      }),
      isCode("invalid_input"),
    );
    await e.threads.cancel({ threadId: e.threadId, requestKey: "stop" });
    await e.threads.promoteQueued({ threadId: e.threadId, requestKey: "p", queueId }).catch(
      () => undefined, // the cancel's hand-over may have started it already
    );
    await e.threads.waitForIdle(e.threadId, { timeoutMs: 10_000 });
    const last = e.gateway.requests.at(-1)!;
    const user = last.messages.findLast((m) => m.role === "user");
    assert.equal(user?.role === "user" ? user.text : undefined, "look at this");
    assert.deepEqual(user?.role === "user" ? user.attachments : undefined, [image]);
  } finally {
    await e.host.shutdown();
  }
});
