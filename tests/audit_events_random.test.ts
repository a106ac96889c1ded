// Audit (round 11): seeded random command sequences (send, queued send,
// cancel in both modes, respond, retry, promote and delete queued, setTitle,
// steer) against a model that answers with text, tool calls, approvals,
// questions and failures. A lone observer joins at a random point (the
// thread's first listener) and a second one re-joins later; whatever the
// sequence, each ends with exactly the view the host reads once the thread is
// idle, with no gap and no duplicated or missing fact. The seed is in the
// test name, so a failure names its sequence.
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import {
  defineAgent,
  defineTool,
  FloretError,
  type KvStore,
  type LocalThreadService,
  memoryStore,
  openHost,
  type ThreadService,
  type ThreadView,
} from "@floret/engine";
import { type DynamicStep, scriptedGateway, type ScriptStep } from "@floret/engine/testing";
import { libsqlStore } from "@floret/engine/libsql";
import { threadApi, threadClient } from "@floret/engine/http";
import { Observer, stateOf } from "./support/audit_observer.ts";

/** A small seeded generator (mulberry32), so every run of a seed is the same sequence. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function modelStep(next: () => number, n: number): ScriptStep {
  const pick = next();
  if (pick < 0.35) {
    return { text: `answer ${n} ünï 🌼`, usage: { inputTokens: n, outputTokens: 2 } };
  }
  if (pick < 0.55) {
    return { toolCalls: [{ name: "add", arguments: { a: n, b: 1 } }], text: "let me add" };
  }
  if (pick < 0.65) return { toolCalls: [{ name: "guarded", arguments: {} }] };
  if (pick < 0.72) {
    return {
      toolCalls: [{ name: "ask_user", arguments: { questions: [{ id: "q", prompt: `Q${n}?` }] } }],
    };
  }
  if (pick < 0.8) return { error: { retry: "never", message: `failure ${n}` } };
  if (pick < 0.88) return { text: `reasoned ${n}`, reasoning: `thinking ${n}`, delayMs: 2 };
  return { text: `slow ${n}`, delayMs: 4 };
}

async function settle(threads: ThreadService, threadId: string): Promise<ThreadView> {
  for (let i = 0; i < 50; i++) {
    const view = await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
    if (view.status === "idle" && view.queue.length === 0) return view;
    if (view.status === "waiting") {
      await threads.cancel({ threadId, requestKey: `settle-cancel-${i}` });
      continue;
    }
    const queued = view.queue[0];
    if (queued) {
      await threads.deleteQueued({ threadId, requestKey: `settle-dq-${i}`, queueId: queued.id });
    }
  }
  throw new Error("the thread never settled");
}

const dir = mkdtempSync(join(tmpdir(), "floret-audit-random-"));
after(() => rmSync(dir, { recursive: true, force: true }));

async function run(seed: number, store: KvStore, overHttp = false): Promise<void> {
  const next = random(seed);
  const add = defineTool({
    name: "add",
    description: "Adds",
    input: z.object({ a: z.number(), b: z.number() }),
    execute: ({ a, b }) => String(a + b),
  });
  const guarded = defineTool({
    name: "guarded",
    description: "Needs approval",
    input: z.object({}),
    effect: "write",
    permission: "ask",
    execute: () => "guarded ran",
  });
  let n = 0;
  const dynamic: DynamicStep = () => modelStep(next, ++n);
  const host = await openHost({ store });
  const local = host.threads({
    agent: defineAgent({
      id: `random-${seed}`,
      systemPrompt: "Random.",
      gateway: scriptedGateway(Array.from({ length: 400 }, () => dynamic)),
      tools: [add, guarded],
      providerRetry: { disabled: true },
      maxSteps: 6,
    }),
  });
  const app = threadApi(local, { authorize: () => true, turnControl: true });
  const threads: LocalThreadService = overHttp
    ? threadClient({ baseUrl: "http://127.0.0.1", fetch: (request) => app.fetch(request) })
    : local;
  const { threadId } = await threads.create({ requestKey: "create" });
  const commands = 14;
  const joinAt = Math.floor(next() * commands);
  const rejoinAt = joinAt + 1 + Math.floor(next() * (commands - joinAt));
  let first: Observer | undefined;
  let second: Observer | undefined;
  const log: string[] = [];
  try {
    for (let i = 0; i < commands; i++) {
      if (i === joinAt) first = await Observer.join(threads, threadId);
      if (i === rejoinAt) {
        const leaving = await Observer.join(threads, threadId);
        await leaving.leave();
        second = await Observer.join(threads, threadId);
      }
      const view = await threads.view(threadId);
      const pick = next();
      const key = `k${i}`;
      try {
        if (view.pending.length > 0 && pick < 0.5) {
          const pending = view.pending[0]!;
          log.push(`respond ${pending.kind}`);
          await threads.respond(
            pending.kind === "approval"
              ? {
                threadId,
                requestKey: key,
                interactionId: pending.id,
                decision: next() < 0.7 ? "approve" : "deny",
              }
              : {
                threadId,
                requestKey: key,
                interactionId: pending.id,
                answers: [{ questionId: "q", value: `answer ${i}` }],
              },
          );
        } else if (pick < 0.45) {
          log.push("send");
          await threads.send({ threadId, requestKey: key, input: { text: `message ${i}` } });
        } else if (pick < 0.55) {
          const mode = next() < 0.5 ? "immediate" : "graceful";
          log.push(`cancel ${mode}`);
          await threads.cancel({ threadId, requestKey: key, mode });
        } else if (pick < 0.63) {
          log.push("retry");
          await threads.retry({ threadId, requestKey: key });
        } else if (pick < 0.7 && view.queue.length > 0) {
          log.push("promote");
          await threads.promoteQueued({ threadId, requestKey: key, queueId: view.queue[0]!.id });
        } else if (pick < 0.76 && view.queue.length > 0) {
          log.push("deleteQueued");
          await threads.deleteQueued({ threadId, requestKey: key, queueId: view.queue[0]!.id });
        } else if (pick < 0.82) {
          log.push("setTitle");
          await threads.setTitle({ threadId, requestKey: key, title: `Title ${i}` });
        } else if (pick < 0.88 && view.status === "running") {
          log.push("steer");
          await threads.steer({ threadId, requestKey: key, text: `steer ${i}` });
        } else {
          log.push("wait");
          await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
        }
      } catch (error) {
        // Refusals the contract allows for the state the thread is in.
        if (!(error instanceof FloretError)) throw error;
        const allowed = [
          "thread_busy",
          "no_retry_target",
          "invalid_input",
          "interaction_not_found",
        ];
        assert.ok(allowed.includes(error.code), `${log.at(-1)}: ${error.code} ${error.message}`);
        log[log.length - 1] += ` (${error.code})`;
      }
    }
    first ??= await Observer.join(threads, threadId);
    const final = await settle(threads, threadId);
    for (const [name, observer] of [["first", first], ["second", second]] as const) {
      if (!observer) continue;
      await observer.reach(final);
      const context = `seed ${seed}, ${name} (joined at ${observer.joinedAt}): ${log.join(", ")}`;
      assert.deepEqual(observer.problems, [], context);
      assert.equal(observer.resyncs, 0, context);
      assert.deepEqual(stateOf(observer.local), stateOf(final), context);
    }
  } finally {
    await first?.leave();
    await second?.leave();
    await host.shutdown();
  }
}

describe("random command sequences under late observers, memory", () => {
  for (let seed = 1; seed <= 40; seed++) {
    test(`seed ${seed}`, async () => {
      await run(seed, memoryStore());
    });
  }
});

describe("random command sequences under late observers, libSQL file", () => {
  for (let seed = 101; seed <= 112; seed++) {
    test(`seed ${seed}`, async () => {
      await run(seed, libsqlStore({ url: `file:${join(dir, `seed${seed}.db`)}` }));
    });
  }
});

describe("random command sequences under late observers, over HTTP", () => {
  for (let seed = 201; seed <= 212; seed++) {
    test(`seed ${seed}`, async () => {
      await run(seed, memoryStore(), true);
    });
  }
});
