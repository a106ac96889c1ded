// Audit (round 11): observers that join a thread at different points of its
// life — before the send, while a tool runs, while an approval or a question
// is pending, while a queued turn runs, after leaving and coming back — each
// follow DESIGN §8's protocol and must end with exactly the view waitForIdle
// gives, with no gap, no duplicated fact and no fact missed after their join.
// The same scenario runs in-process and through threadClient over threadApi,
// on a memory store and on a libSQL file (whose commits land asynchronously).
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import {
  defineAgent,
  defineTool,
  type KvStore,
  memoryStore,
  openHost,
  type ThreadService,
  type ThreadView,
} from "@floret/engine";
import { scriptedGateway } from "@floret/engine/testing";
import { libsqlStore } from "@floret/engine/libsql";
import { threadApi, threadClient } from "@floret/engine/http";
import { Observer, stateOf } from "./support/audit_observer.ts";

const dir = mkdtempSync(join(tmpdir(), "floret-audit-events-"));
after(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;

const stores: { name: string; open: () => KvStore }[] = [
  { name: "memory", open: () => memoryStore() },
  { name: "libSQL file", open: () => libsqlStore({ url: `file:${join(dir, `j${++files}.db`)}` }) },
];

const services: { name: string; wrap: (threads: ThreadService) => ThreadService }[] = [
  { name: "in-process", wrap: (threads) => threads },
  {
    name: "over HTTP",
    wrap: (threads) => {
      const app = threadApi(threads, { authorize: () => true });
      return threadClient({ baseUrl: "http://127.0.0.1", fetch: (request) => app.fetch(request) });
    },
  },
];

/** A latch the test opens: a tool waits on it, the test learns when the tool started. */
function latch(): {
  entered: Promise<void>;
  enter: () => void;
  open: () => void;
  opened: Promise<void>;
} {
  let enter!: () => void;
  let open!: () => void;
  const entered = new Promise<void>((resolve) => (enter = resolve));
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { entered, enter, open, opened };
}

async function waitUntil(
  threads: ThreadService,
  threadId: string,
  ready: (view: ThreadView) => boolean,
): Promise<ThreadView> {
  for (let i = 0; i < 2000; i++) {
    const view = await threads.view(threadId);
    if (ready(view)) return view;
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  throw new Error("the thread never reached the expected state");
}

type Phase = "beforeSend" | "toolRunning" | "approvalPending" | "questionPending" | "queuedTurn";

/**
 * Runs the scenario with observers joining at `phases` only (so a lone late
 * observer is the thread's first listener), and `leaver` subscribing while the
 * first tool runs and leaving before anything else happens, when asked.
 */
async function scenario(
  store: (typeof stores)[number],
  service: (typeof services)[number],
  phases: readonly Phase[],
  leaver: boolean,
): Promise<void> {
  const first = latch();
  const second = latch();
  const gate = defineTool({
    name: "gate",
    description: "Waits for the test",
    input: z.object({ n: z.number() }),
    execute: async ({ n }) => {
      const which = n === 1 ? first : second;
      which.enter();
      await which.opened;
      return { output: `gate ${n} open`, activity: { label: `gate ${n}` } };
    },
  });
  const add = defineTool({
    name: "add",
    description: "Adds",
    input: z.object({ a: z.number(), b: z.number() }),
    execute: ({ a, b }) => String(a + b),
  });
  const danger = defineTool({
    name: "danger",
    description: "Needs approval",
    input: z.object({}),
    effect: "write",
    permission: "ask",
    execute: () => "done with danger",
  });
  const gateway = scriptedGateway([
    { toolCalls: [{ name: "add", arguments: { a: 1, b: 2 } }], text: "adding" },
    { toolCalls: [{ name: "gate", arguments: { n: 1 } }] },
    { toolCalls: [{ name: "danger", arguments: {} }] },
    {
      toolCalls: [{
        name: "ask_user",
        arguments: { questions: [{ id: "q", prompt: "Size?" }] },
      }],
    },
    {
      text: "all done — ünïcode 🌼",
      reasoning: "weighing…",
      usage: { inputTokens: 9, outputTokens: 4 },
    },
    { toolCalls: [{ name: "gate", arguments: { n: 2 } }] },
    { text: "second answer", delayMs: 3 },
  ]);
  const host = await openHost({ store: store.open() });
  const local = host.threads({
    agent: defineAgent({
      id: "audit",
      systemPrompt: "Audit.",
      gateway,
      tools: [add, gate, danger],
      providerRetry: { delaysMs: [1, 1, 1, 1] },
    }),
  });
  const threads = service.wrap(local);
  try {
    const { threadId } = await threads.create({ requestKey: "create" });
    const observers: Record<string, Observer> = {};
    const joinAt = async (phase: Phase): Promise<void> => {
      if (phases.includes(phase)) observers[phase] = await Observer.join(threads, threadId);
    };
    await joinAt("beforeSend");
    const sent = await threads.send({
      threadId,
      requestKey: "send-1",
      input: { text: "first message" },
    });
    assert.equal(sent.queued, false);

    await first.entered;
    await joinAt("toolRunning");
    const leaving = leaver ? await Observer.join(threads, threadId) : undefined;
    const queued = await threads.send({
      threadId,
      requestKey: "send-2",
      input: { text: "queued message" },
    });
    assert.equal(queued.queued, true);
    await leaving?.until(queued.view.viewVersion);
    await leaving?.leave();
    first.open();

    const approval = await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
    assert.equal(approval.status, "waiting");
    assert.equal(approval.pending[0]?.kind, "approval");
    await joinAt("approvalPending");
    await threads.respond({
      threadId,
      requestKey: "approve",
      interactionId: approval.pending[0]!.id,
      decision: "approve",
    });

    const question = await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
    assert.equal(question.pending[0]?.kind, "input");
    await joinAt("questionPending");
    await threads.respond({
      threadId,
      requestKey: "answer",
      interactionId: question.pending[0]!.id,
      answers: [{ questionId: "q", value: "large" }],
    });

    await second.entered;
    const during = await waitUntil(threads, threadId, (v) => v.turns.length === 2);
    assert.equal(during.status, "running");
    assert.deepEqual(during.queue, []);
    await joinAt("queuedTurn");
    second.open();

    const final = await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
    assert.equal(final.status, "idle");
    assert.deepEqual(final.turns.map((turn) => turn.outcome), ["completed", "completed"]);
    assert.deepEqual(
      final.items.map((item) => item.kind),
      [
        "user",
        "assistant",
        "tool",
        "tool",
        "tool",
        "interaction",
        "thinking",
        "assistant",
        "user",
        "tool",
        "assistant",
      ],
    );
    for (const [name, observer] of Object.entries(observers)) {
      await observer.reach(final);
      assert.deepEqual(observer.problems, [], `${name}: protocol breaches`);
      assert.equal(observer.resyncs, 0, `${name}: no resync`);
      assert.deepEqual(stateOf(observer.local), stateOf(final), `${name}: final state`);
      assert.equal(
        observer.applied[0]?.baseVersion ?? observer.joinedAt,
        observer.joinedAt,
        `${name}: the first batch continues the view it read`,
      );
    }
    // Every observer saw the same batches from its join point on.
    const reference = Object.values(observers)[0]!.applied;
    for (const [name, observer] of Object.entries(observers)) {
      const tail = reference.filter((batch) => batch.version > observer.joinedAt);
      assert.deepEqual(observer.applied, tail, `${name}: the same batches as the first`);
    }
    for (const observer of Object.values(observers)) await observer.leave();
  } finally {
    first.open();
    second.open();
    await host.shutdown();
  }
}

const ALL: Phase[] = [
  "beforeSend",
  "toolRunning",
  "approvalPending",
  "questionPending",
  "queuedTurn",
];

for (const store of stores) {
  for (const service of services) {
    describe(`observers joining at every point, ${service.name}, ${store.name}`, () => {
      test("several at once (the first from before the send): each ends with waitForIdle's view, the same batches after its join", async () => {
        await scenario(store, service, ALL, true);
      });
      for (const phase of ALL.slice(1)) {
        test(`a lone observer joining at ${phase} (nobody listened before) ends with waitForIdle's view`, async () => {
          await scenario(store, service, [phase], false);
        });
      }
      test("one that subscribed and left while the first tool ran, then a lone observer at the question", async () => {
        await scenario(store, service, ["questionPending"], true);
      });
    });
  }
}
