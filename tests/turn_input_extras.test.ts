/**
 * User input with references and context items (DESIGN §11): validated and
 * bounded, stored with the message, shown on its user item (also over HTTP
 * and after a restart), and rendered into every later request.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import {
  defineAgent,
  FloretError,
  type InputContextItem,
  type InputReference,
  memoryStore,
  openHost,
  type ThreadItem,
  type ThreadService,
} from "@floret/engine";
import { scriptedGateway } from "@floret/engine/testing";
import { overHttp } from "./support/over_http.ts";

const REFERENCES: InputReference[] = [
  { kind: "thread", threadId: "thread-other" },
  { kind: "thread", threadId: "thread-older", itemId: "turn-1:user" },
];
const CONTEXT: InputContextItem[] = [
  { label: "Open file", text: "src/main.ts line 12" },
  { label: "Selection", text: "const answer = 42;" },
];
const RENDERED = "Explain this\n\n[Context: Open file]\nsrc/main.ts line 12\n\n" +
  "[Context: Selection]\nconst answer = 42;\n\n" +
  "[Reference: thread thread-other]\n[Reference: thread thread-older, item turn-1:user]";

function agentWith(gateway: ReturnType<typeof scriptedGateway>) {
  return defineAgent({ id: "extras", systemPrompt: "S", gateway });
}

function userItems(items: ThreadItem[]): ThreadItem[] {
  return items.filter((item) => item.kind === "user");
}

/** The user messages' texts of one recorded request. */
function userTexts(gateway: ReturnType<typeof scriptedGateway>, index: number): string[] {
  return gateway.requests[index].messages
    .filter((message) => message.role === "user")
    .map((message) => (message as { text: string }).text);
}

async function expectInvalid(promise: Promise<unknown>, pattern?: RegExp): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof FloretError);
    assert.equal(error.code, "invalid_input");
    if (pattern) assert.match(error.message, pattern);
    return true;
  });
}

describe("references and context items on user input", () => {
  test("stored with the message, shown on its item, rendered into every later request", async () => {
    // One store for both hosts: a shutdown leaves it open for the next.
    const store = { ...memoryStore(), close: async () => {} };
    const gateway = scriptedGateway([{ text: "first" }, { text: "second" }, { text: "third" }]);
    const host = await openHost({ store });
    const threads = host.threads({ agent: agentWith(gateway) });
    const { threadId } = await threads.create({ requestKey: "c" });
    const sent = await threads.send({
      threadId,
      requestKey: "s1",
      input: { text: "Explain this", references: REFERENCES, context: CONTEXT },
    });
    const shown = userItems(sent.view.items)[0];
    assert.equal(shown.kind, "user");
    if (shown.kind !== "user") return;
    assert.equal(shown.text, "Explain this", "the item keeps the text as written");
    assert.deepEqual(shown.references, REFERENCES);
    assert.deepEqual(shown.context, CONTEXT);
    // The view's copy is the host's own: editing it changes no later view.
    shown.context![0].label = "edited";
    await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
    await threads.send({ threadId, requestKey: "s2", input: { text: "And then?" } });
    await threads.waitForIdle(threadId, { timeoutMs: 10_000 });

    assert.deepEqual(userTexts(gateway, 0), [RENDERED]);
    assert.deepEqual(
      userTexts(gateway, 1),
      [RENDERED, "And then?"],
      "a later turn still reads them",
    );
    const view = await threads.view(threadId);
    const [first, second] = userItems(view.items);
    assert.deepEqual(first.kind === "user" && first.context, CONTEXT);
    assert.equal(second.kind === "user" && second.references, undefined, "plain input has none");
    assert.equal(second.kind === "user" && second.context, undefined);
    await host.shutdown();

    // A restarted host reads them from the journal: the item shows them, requests render them.
    const again = await openHost({ store });
    const reopened = again.threads({ agent: agentWith(gateway) });
    const restored = userItems((await reopened.view(threadId)).items)[0];
    assert.deepEqual(restored.kind === "user" && restored.references, REFERENCES);
    assert.deepEqual(restored.kind === "user" && restored.context, CONTEXT);
    await reopened.send({ threadId, requestKey: "s3", input: { text: "Last" } });
    await reopened.waitForIdle(threadId, { timeoutMs: 10_000 });
    assert.deepEqual(userTexts(gateway, 2), [RENDERED, "And then?", "Last"]);
    const page = await reopened.history(threadId, { limit: 10 });
    const paged = userItems(page.items)[0];
    assert.deepEqual(paged.kind === "user" && paged.references, REFERENCES);
    await again.shutdown();
  });

  test("a message of references only is accepted; its request names them", async () => {
    const gateway = scriptedGateway([{ text: "ok" }]);
    const host = await openHost({ store: memoryStore() });
    const threads = host.threads({ agent: agentWith(gateway) });
    const { threadId } = await threads.create({ requestKey: "c" });
    await threads.send({
      threadId,
      requestKey: "s",
      input: { text: "", references: [{ kind: "thread", threadId: "t-9", itemId: "i-3" }] },
    });
    await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
    assert.deepEqual(userTexts(gateway, 0), ["[Reference: thread t-9, item i-3]"]);
    await host.shutdown();
  });

  test("queued input keeps them until its turn runs; a retry renders them again", async () => {
    const gateway = scriptedGateway([
      { text: "one", delayMs: 50 },
      { text: "two" },
      { text: "two again" },
    ]);
    const host = await openHost({ store: memoryStore() });
    const threads = host.threads({ agent: agentWith(gateway) });
    const { threadId } = await threads.create({ requestKey: "c" });
    await threads.send({ threadId, requestKey: "s1", input: { text: "hi" } });
    const queued = await threads.send({
      threadId,
      requestKey: "s2",
      input: { text: "Explain this", references: REFERENCES, context: CONTEXT },
    });
    assert.equal(queued.queued, true);
    while ((await threads.view(threadId)).turns.length < 2) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
    assert.deepEqual(userTexts(gateway, 1), ["hi", RENDERED]);
    await threads.retry({ threadId, requestKey: "r" });
    await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
    assert.deepEqual(userTexts(gateway, 2), ["hi", RENDERED]);
    await host.shutdown();
  });

  test("over HTTP: the send body carries them and the item shows them", async () => {
    const gateway = scriptedGateway([{ text: "ok" }]);
    const host = await openHost({ store: memoryStore() });
    const client = overHttp(host.threads({ agent: agentWith(gateway) }));
    const { threadId } = await client.create({ requestKey: "c" });
    const sent = await client.send({
      threadId,
      requestKey: "s",
      input: { text: "Explain this", references: REFERENCES, context: CONTEXT },
    });
    const item = userItems(sent.view.items)[0];
    assert.deepEqual(item.kind === "user" && item.references, REFERENCES);
    assert.deepEqual(item.kind === "user" && item.context, CONTEXT);
    await client.waitForIdle(threadId, { timeoutMs: 10_000 });
    assert.deepEqual(userTexts(gateway, 0), [RENDERED]);
    await expectInvalid(client.send({
      threadId,
      requestKey: "bad",
      input: { text: "x", context: [{ label: "", text: "y" }] },
    }));
    await host.shutdown();
  });

  test("bad or oversized references and context are invalid_input and change nothing", async () => {
    const gateway = scriptedGateway([]);
    const host = await openHost({ store: memoryStore() });
    const threads: ThreadService = host.threads({ agent: agentWith(gateway) });
    const { threadId } = await threads.create({ requestKey: "c" });
    const send = (input: unknown, requestKey = "k") =>
      threads.send({ threadId, requestKey, input } as Parameters<ThreadService["send"]>[0]);
    const many = <T>(count: number, make: (i: number) => T) =>
      Array.from({ length: count }, (_, i) => make(i));
    const cases: unknown[] = [
      { text: "x", references: many(65, (i) => ({ kind: "thread", threadId: `t${i}` })) },
      { text: "x", references: [{ kind: "file", threadId: "t" }] },
      { text: "x", references: [{ kind: "thread" }] },
      { text: "x", references: [{ kind: "thread", threadId: "" }] },
      { text: "x", references: [{ kind: "thread", threadId: "t".repeat(257) }] },
      { text: "x", references: [{ kind: "thread", threadId: "t", itemId: 3 }] },
      { text: "x", references: [{ kind: "thread", threadId: "t", extra: true }] },
      { text: "x", references: { kind: "thread", threadId: "t" } },
      { text: "x", context: many(33, (i) => ({ label: `l${i}`, text: "t" })) },
      { text: "x", context: [{ label: "  ", text: "t" }] },
      { text: "x", context: [{ label: "l".repeat(257), text: "t" }] },
      { text: "x", context: [{ label: "l", text: "t".repeat(65_537) }] },
      { text: "x", context: many(5, () => ({ label: "l", text: "t".repeat(60_000) })) },
      { text: "x", context: [{ label: "l" }] },
      { text: "x", context: [{ label: "l", text: "\ud800" }] },
      { text: "", context: [{ label: "l", text: "context alone is not a message" }] },
      { text: "", references: [] },
    ];
    for (const [index, input] of cases.entries()) {
      await expectInvalid(send(input, `k${index}`));
    }
    const view = await threads.view(threadId);
    assert.equal(view.turns.length, 0);
    assert.equal(view.items.length, 0);
    assert.equal(gateway.requests.length, 0);
    // The keys were not consumed: a valid input under one of them is admitted.
    const ok = await send({ text: "fine", context: [{ label: "l", text: "t" }] }, "k0");
    assert.equal(ok.queued, false);
    await host.shutdown();
  });
});
