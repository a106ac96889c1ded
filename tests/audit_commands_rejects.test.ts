// Audit of rejected commands (DESIGN §8 precise points, §10 robustness): bad
// input to every command and option, ids that name no thread, and refusals
// (no target, busy, unknown interaction or queued input) are a FloretError
// with the stable code, and change nothing: no commit reaches the store, the
// view version stays, and the request key is not consumed (the same key then
// works for a valid command).
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import {
  defineAgent,
  type KvStore,
  type LocalThreadService,
  memoryStore,
  openHost,
  type ThreadView,
} from "@floret/engine";
import { scriptedGateway } from "@floret/engine/testing";
import { codeOf } from "./support/audit_commands.ts";
import { FAST_RETRY } from "./support/engine.ts";
import { writeCalls, writeTool } from "./support/interactions.ts";

// deno-lint-ignore no-explicit-any
type Loose = any;
const WAIT = { timeoutMs: 10_000 };

/** A memory store that counts the commits that reach it. */
function countingStore(): KvStore & { commits: number } {
  const inner = memoryStore();
  const store = {
    commits: 0,
    getMany: (keys: Parameters<KvStore["getMany"]>[0]) => inner.getMany(keys),
    list: (selector: Parameters<KvStore["list"]>[0], options?: Parameters<KvStore["list"]>[1]) =>
      inner.list(selector, options),
    commit: (op: Parameters<KvStore["commit"]>[0]) => {
      store.commits++;
      return inner.commit(op);
    },
    close: () => inner.close(),
  };
  return store;
}

/** What must not move when a command is rejected. */
async function footprint(
  threads: LocalThreadService,
  store: { commits: number },
  threadId: string,
): Promise<{ commits: number; viewVersion: number; view: unknown }> {
  const view: ThreadView = await threads.view(threadId);
  const { viewVersion, ...rest } = view;
  return { commits: store.commits, viewVersion, view: JSON.parse(JSON.stringify(rest)) };
}

const NOT_THREADS: unknown[] = [
  "\uD800",
  "thread_\uDC00x",
  "thread_00000000000000000000000000",
  "",
  " ",
  5,
  null,
  undefined,
  {},
  ["thread_x"],
];

describe("rejected commands change nothing and keep their key", () => {
  test("bad input, unknown ids and refusals on every command", { timeout: 60_000 }, async () => {
    const store = countingStore();
    const ran: string[] = [];
    const gateway = scriptedGateway([
      { text: "first" },
      writeCalls("w"),
      { text: "approved" },
      { hang: true },
      { text: "key reused" },
    ]);
    const host = await openHost({ store });
    const threads = host.threads({
      agent: defineAgent({
        id: "audit",
        systemPrompt: "Audit.",
        gateway,
        tools: [writeTool(ran)],
        providerRetry: FAST_RETRY,
      }),
    }) as LocalThreadService;
    const t: Loose = threads;
    const { threadId: id } = await threads.create({ requestKey: "c" });

    // No turns yet: retry has no target.
    const expectNothing = async (label: string, call: () => Promise<unknown>, code: string) => {
      const before = await footprint(threads, store, id);
      const got = await codeOf(call());
      assert.equal(got, code, label);
      const after = await footprint(threads, store, id);
      assert.deepEqual(after, before, `${label} changed something`);
    };
    await expectNothing(
      "retry without turns",
      () => t.retry({ threadId: id, requestKey: "K" }),
      "no_retry_target",
    );

    const longKey = "k".repeat(257);
    const badKeys: unknown[] = ["", "   ", longKey, "\uD800", 5, null, undefined, {}, ["k"]];
    const commands: [string, (key: unknown) => Promise<unknown>][] = [
      ["create", (requestKey) => t.create({ requestKey })],
      ["send", (requestKey) => t.send({ threadId: id, requestKey, input: { text: "x" } })],
      [
        "respond",
        (requestKey) =>
          t.respond({ threadId: id, requestKey, interactionId: "i", decision: "approve" }),
      ],
      ["cancel", (requestKey) => t.cancel({ threadId: id, requestKey })],
      ["steer", (requestKey) => t.steer({ threadId: id, requestKey, text: "x" })],
      ["retry", (requestKey) => t.retry({ threadId: id, requestKey })],
      ["fork", (requestKey) => t.fork({ threadId: id, requestKey })],
      ["delete", (requestKey) => t.delete({ threadId: id, requestKey })],
      ["setTitle", (requestKey) => t.setTitle({ threadId: id, requestKey, title: "x" })],
      [
        "promoteQueued",
        (requestKey) => t.promoteQueued({ threadId: id, requestKey, queueId: "q" }),
      ],
      ["deleteQueued", (requestKey) => t.deleteQueued({ threadId: id, requestKey, queueId: "q" })],
      [
        "editQueued",
        (requestKey) =>
          t.editQueued({ threadId: id, requestKey, queueId: "q", text: "x", expectedText: "y" }),
      ],
      ["compact", (requestKey) => t.compact({ threadId: id, requestKey })],
    ];
    for (const [name, call] of commands) {
      for (const key of badKeys) {
        await expectNothing(`${name} key ${JSON.stringify(key)}`, () => call(key), "invalid_input");
      }
    }

    // Every command on ids that name no thread.
    for (const threadId of NOT_THREADS) {
      const label = (what: string) => `${what} on ${JSON.stringify(threadId)}`;
      const calls: [string, () => Promise<unknown>][] = [
        ["send", () => t.send({ threadId, requestKey: "K", input: { text: "x" } })],
        [
          "respond",
          () => t.respond({ threadId, requestKey: "K", interactionId: "i", decision: "approve" }),
        ],
        ["cancel", () => t.cancel({ threadId, requestKey: "K" })],
        ["steer", () => t.steer({ threadId, requestKey: "K", text: "x" })],
        ["retry", () => t.retry({ threadId, requestKey: "K" })],
        ["fork", () => t.fork({ threadId, requestKey: "K" })],
        ["delete", () => t.delete({ threadId, requestKey: "K" })],
        ["setTitle", () => t.setTitle({ threadId, requestKey: "K", title: "x" })],
        ["promoteQueued", () => t.promoteQueued({ threadId, requestKey: "K", queueId: "q" })],
        ["deleteQueued", () => t.deleteQueued({ threadId, requestKey: "K", queueId: "q" })],
        [
          "editQueued",
          () =>
            t.editQueued({ threadId, requestKey: "K", queueId: "q", text: "x", expectedText: "x" }),
        ],
        ["compact", () => t.compact({ threadId, requestKey: "K" })],
        ["view", () => t.view(threadId)],
        ["history", () => t.history(threadId)],
        ["context", () => t.context(threadId)],
        ["waitForIdle", () => t.waitForIdle(threadId, { timeoutMs: 10 })],
        ["artifact", () => t.artifact(threadId, "a")],
      ];
      for (const [name, call] of calls) await expectNothing(label(name), call, "thread_not_found");
    }

    // Wrong types of every other field and option.
    const wrong: [string, () => Promise<unknown>][] = [
      ["create array", () => t.create([{ requestKey: "K" }])],
      ["create title 501", () => t.create({ requestKey: "K", title: "t".repeat(501) })],
      ["create title lone surrogate", () => t.create({ requestKey: "K", title: "\uDFFF" })],
      ["send blank text", () => t.send({ threadId: id, requestKey: "K", input: { text: "  " } })],
      ["send input string", () => t.send({ threadId: id, requestKey: "K", input: "hello" })],
      [
        "send attachments object",
        () => t.send({ threadId: id, requestKey: "K", input: { text: "x", attachments: {} } }),
      ],
      [
        "send bad attachment",
        () =>
          t.send({
            threadId: id,
            requestKey: "K",
            input: {
              text: "x",
              attachments: [{ type: "image", mediaType: "image/bmp", dataBase64: "AA==" }],
            },
          }),
      ],
      [
        "send supplementalContext object",
        () =>
          t.send({ threadId: id, requestKey: "K", input: { text: "x" }, supplementalContext: {} }),
      ],
      [
        "send supplementalContext null",
        () =>
          t.send({
            threadId: id,
            requestKey: "K",
            input: { text: "x" },
            supplementalContext: null,
          }),
      ],
      [
        "respond decision maybe",
        () => t.respond({ threadId: id, requestKey: "K", interactionId: "i", decision: "maybe" }),
      ],
      [
        "respond answers string",
        () => t.respond({ threadId: id, requestKey: "K", interactionId: "i", answers: "Oslo" }),
      ],
      [
        "respond interactionId 5",
        () => t.respond({ threadId: id, requestKey: "K", interactionId: 5, decision: "approve" }),
      ],
      [
        "respond interactionId empty",
        () => t.respond({ threadId: id, requestKey: "K", interactionId: "", decision: "approve" }),
      ],
      [
        "cancel includeDescendants 'yes'",
        () => t.cancel({ threadId: id, requestKey: "K", includeDescendants: "yes" }),
      ],
      ["cancel mode null", () => t.cancel({ threadId: id, requestKey: "K", mode: null })],
      ["steer blank", () => t.steer({ threadId: id, requestKey: "K", text: " " })],
      ["steer text 5", () => t.steer({ threadId: id, requestKey: "K", text: 5 })],
      ["retry turnId empty", () => t.retry({ threadId: id, requestKey: "K", turnId: "" })],
      ["fork atItemId 5", () => t.fork({ threadId: id, requestKey: "K", atItemId: 5 })],
      [
        "fork atItemId unknown",
        () => t.fork({ threadId: id, requestKey: "K", atItemId: "item_none" }),
      ],
      ["setTitle blank", () => t.setTitle({ threadId: id, requestKey: "K", title: "  " })],
      ["setTitle 501", () => t.setTitle({ threadId: id, requestKey: "K", title: "t".repeat(501) })],
      [
        "promoteQueued queueId 5",
        () => t.promoteQueued({ threadId: id, requestKey: "K", queueId: 5 }),
      ],
      [
        "promoteQueued unknown",
        () => t.promoteQueued({ threadId: id, requestKey: "K", queueId: "queue_none" }),
      ],
      [
        "deleteQueued unknown",
        () => t.deleteQueued({ threadId: id, requestKey: "K", queueId: "queue_none" }),
      ],
      [
        "editQueued expectedText 5",
        () =>
          t.editQueued({ threadId: id, requestKey: "K", queueId: "q", text: "x", expectedText: 5 }),
      ],
      [
        "editQueued unknown",
        () =>
          t.editQueued({
            threadId: id,
            requestKey: "K",
            queueId: "q",
            text: "x",
            expectedText: "y",
          }),
      ],
      ["steer idle thread", () => t.steer({ threadId: id, requestKey: "K", text: "x" })],
      ["compact extra null", () => t.compact(null)],
      ["delete number", () => t.delete(5)],
      ["waitForIdle NaN", () => t.waitForIdle(id, { timeoutMs: Number.NaN })],
      ["waitForIdle -1", () => t.waitForIdle(id, { timeoutMs: -1 })],
      ["waitForIdle Infinity", () => t.waitForIdle(id, { timeoutMs: Number.POSITIVE_INFINITY })],
      ["waitForIdle -Infinity", () => t.waitForIdle(id, { timeoutMs: Number.NEGATIVE_INFINITY })],
      ["waitForIdle '5'", () => t.waitForIdle(id, { timeoutMs: "5" })],
      ["waitForIdle 5n", () => t.waitForIdle(id, { timeoutMs: 5n })],
      ["history limit -1", () => t.history(id, { limit: -1 })],
      ["history limit 1.5", () => t.history(id, { limit: 1.5 })],
      ["history before 5", () => t.history(id, { before: 5 })],
      ["list limit NaN", () => t.list({ limit: Number.NaN })],
      ["list cursor 5", () => t.list({ cursor: 5 })],
      [
        "send getter that throws",
        () =>
          t.send({
            threadId: id,
            requestKey: "K",
            get input() {
              throw new Error("no");
            },
          }),
      ],
      [
        "send proxy that throws",
        () =>
          t.send(
            new Proxy({}, {
              get() {
                throw new Error("trap");
              },
              has() {
                throw new Error("trap");
              },
            }),
          ),
      ],
    ];
    for (const [label, call] of wrong) await expectNothing(label, call, "invalid_input");

    // Refusals with their own codes, around a turn under way and a pending approval.
    await threads.send({ threadId: id, requestKey: "s1", input: { text: "one" } });
    await threads.waitForIdle(id, WAIT);
    const firstTurn = (await threads.view(id)).turns[0].turnId;
    await threads.send({ threadId: id, requestKey: "s2", input: { text: "write" } });
    const waiting = await threads.waitForIdle(id, WAIT);
    assert.equal(waiting.status, "waiting");
    const interactionId = waiting.pending[0].id;
    await expectNothing(
      "respond unknown interaction",
      () =>
        t.respond({
          threadId: id,
          requestKey: "K",
          interactionId: "int_none",
          decision: "approve",
        }),
      "interaction_not_found",
    );
    await expectNothing(
      "respond answers on approval",
      () =>
        t.respond({
          threadId: id,
          requestKey: "K",
          interactionId,
          answers: [{ questionId: "q", value: "v" }],
        }),
      "invalid_input",
    );
    await expectNothing(
      "respond without resolution",
      () => t.respond({ threadId: id, requestKey: "K", interactionId }),
      "invalid_input",
    );
    await expectNothing(
      "retry while waiting",
      () => t.retry({ threadId: id, requestKey: "K" }),
      "thread_busy",
    );
    await threads.respond({ threadId: id, requestKey: "r", interactionId, decision: "approve" });
    await threads.waitForIdle(id, WAIT);
    await expectNothing(
      "respond deny after approve",
      () => t.respond({ threadId: id, requestKey: "K", interactionId, decision: "deny" }),
      "request_conflict",
    );
    await expectNothing(
      "retry of an older turn",
      () => t.retry({ threadId: id, requestKey: "K", turnId: firstTurn }),
      "no_retry_target",
    );

    await threads.send({ threadId: id, requestKey: "s3", input: { text: "hang" } });
    const queued = await threads.send({ threadId: id, requestKey: "s4", input: { text: "later" } });
    assert.equal(queued.queued, true);
    const queueId = queued.view.queue[0].id;
    await expectNothing(
      "retry while running",
      () => t.retry({ threadId: id, requestKey: "K" }),
      "thread_busy",
    );
    await expectNothing(
      "promote while running",
      () => t.promoteQueued({ threadId: id, requestKey: "K", queueId }),
      "thread_busy",
    );
    await expectNothing(
      "editQueued stale expectedText",
      () =>
        t.editQueued({ threadId: id, requestKey: "K", queueId, text: "new", expectedText: "old" }),
      "request_conflict",
    );
    await threads.cancel({ threadId: id, requestKey: "x" });
    await threads.waitForIdle(id, WAIT);

    // None of the rejections consumed "K": a valid command takes it now.
    const promoted = await threads.promoteQueued({ threadId: id, requestKey: "K", queueId });
    assert.equal(promoted.view.status, "running");
    const done = await threads.waitForIdle(id, WAIT);
    assert.equal(done.items.at(-1)?.text, "key reused");
    assert.equal((await threads.create({ requestKey: "K" })).threadId.startsWith("thread_"), true);
    assert.deepEqual(ran, ["w"]);
    await host.shutdown();
  });
});
