/**
 * Issue 8, causes 1 (a store commit failing mid-run), 2 (a commit that lands
 * but whose reply is lost) and 3 (a store whose commit keeps answering
 * `{ ok: false }`): every failure is a FloretError `storage_failure`, every
 * loop is bounded, and a run whose commit failed settles its turn by itself
 * once the store answers again.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import { defineAgent, defineTool, openHost, type ThreadService } from "@floret/engine";
import { scriptedGateway, type ScriptStep } from "@floret/engine/testing";
import { lastTurn } from "./support/engine.ts";
import { type FaultyStore, faultyStore, rejectsWith, TIMEOUT, watchdog } from "./support/robust.ts";

const WATCHDOG_MS = 20_000;
/** Re-plans allowed by DESIGN §10, plus the first attempt and one spare. */
const MAX_COMMITS_PER_COMMAND = 10;

async function start(steps: ScriptStep[], store: FaultyStore, onTool?: () => void) {
  const probe = defineTool({
    name: "probe",
    description: "Runs a hook",
    input: z.object({}),
    execute: () => {
      onTool?.();
      return "probed";
    },
  });
  const host = await openHost({ store });
  const threads: ThreadService = host.threads({
    agent: defineAgent({
      id: "a",
      systemPrompt: "s",
      gateway: scriptedGateway(steps),
      tools: [probe],
      providerRetry: { delaysMs: [1, 1, 1, 1] },
    }),
  });
  const { threadId } = await threads.create({ requestKey: "c" });
  return { host, threads, threadId };
}

const toolThenAnswer: ScriptStep[] = [
  { toolCalls: [{ name: "probe", arguments: {} }] },
  { text: "done" },
];

describe("robustness: store faults", () => {
  test(
    "a command whose commit throws fails with storage_failure; the next one works",
    TIMEOUT,
    async () => {
      await watchdog(WATCHDOG_MS, async () => {
        const store = faultyStore();
        const { host, threads, threadId } = await start([{ text: "hi" }], store);
        store.faults.throwCommits = 1;
        await rejectsWith(
          threads.setTitle({ threadId, requestKey: "t", title: "x" }),
          "storage_failure",
        );
        const { view } = await threads.setTitle({ threadId, requestKey: "t", title: "x" });
        assert.equal(view.title, "x");
        await host.shutdown();
      });
    },
  );

  test(
    "a run whose commit throws settles its turn by itself once the store answers again",
    TIMEOUT,
    async () => {
      await watchdog(WATCHDOG_MS, async () => {
        const store = faultyStore();
        // The tool's results commit fails three times, then the store recovers.
        const { host, threads, threadId } = await start(
          toolThenAnswer,
          store,
          () => (store.faults.throwCommits = 3),
        );
        await threads.send({ threadId, requestKey: "s", input: { text: "go" } });
        const view = await threads.waitForIdle(threadId, { timeoutMs: 15_000 });
        assert.notEqual(view.status, "running");
        const turn = view.turns.at(-1)!;
        assert.ok(turn.outcome !== undefined, "the turn has an outcome");
        assert.equal(view.items.filter((item) => item.kind === "user").length, 1);
        await host.shutdown();
      });
    },
  );

  test(
    "a run whose store stays down keeps the turn honest and settles once it is back",
    TIMEOUT,
    async () => {
      await watchdog(WATCHDOG_MS, async () => {
        const store = faultyStore();
        const { host, threads, threadId } = await start(
          toolThenAnswer,
          store,
          () => (store.faults.throwCommits = 1_000_000),
        );
        await threads.send({ threadId, requestKey: "s", input: { text: "go" } });
        await new Promise((resolve) => setTimeout(resolve, 200));
        store.faults.throwCommits = 0; // the store answers again
        const view = await threads.waitForIdle(threadId, { timeoutMs: 15_000 });
        assert.notEqual(view.status, "running");
        assert.ok(view.turns.at(-1)!.outcome);
        await host.shutdown();
      });
    },
  );

  test(
    "a lost reply on send: a replay returns the thread as it is now, and the turn runs or is settled",
    TIMEOUT,
    async () => {
      await watchdog(WATCHDOG_MS, async () => {
        const store = faultyStore();
        const { host, threads, threadId } = await start([{ text: "answer" }], store);
        store.faults.loseReplies = 1;
        const input = { threadId, requestKey: "s", input: { text: "go" } };
        await rejectsWith(threads.send(input), "storage_failure");
        const replay = await threads.send(input);
        assert.equal(replay.view.items.filter((item) => item.kind === "user").length, 1);
        assert.ok(replay.turnId, "the replay names the admitted turn");
        const view = await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
        assert.equal(view.items.filter((item) => item.kind === "user").length, 1);
        assert.ok(view.turns.at(-1)!.outcome, "the admitted turn ran or was settled");
        assert.notEqual(view.status, "running");
        await host.shutdown();
      });
    },
  );

  test(
    "a lost reply on create and setTitle: the replay returns the committed result",
    TIMEOUT,
    async () => {
      await watchdog(WATCHDOG_MS, async () => {
        const store = faultyStore();
        const { host, threads, threadId } = await start([{ text: "answer" }], store);
        store.faults.loseReplies = 1;
        await rejectsWith(threads.create({ requestKey: "c2" }), "storage_failure");
        const created = await threads.create({ requestKey: "c2" });
        assert.equal((await threads.view(created.threadId)).status, "idle");
        store.faults.loseReplies = 1;
        await rejectsWith(
          threads.setTitle({ threadId, requestKey: "t", title: "new" }),
          "storage_failure",
        );
        const { view } = await threads.setTitle({ threadId, requestKey: "t", title: "new" });
        assert.equal(view.title, "new");
        await host.shutdown();
      });
    },
  );

  test(
    "a store that keeps answering { ok: false }: openHost fails with storage_failure, bounded",
    TIMEOUT,
    async () => {
      await watchdog(WATCHDOG_MS, async () => {
        const store = faultyStore();
        store.faults.staleCommits = 1_000_000;
        await rejectsWith(openHost({ store }), "storage_failure");
        assert.ok(store.attempts <= MAX_COMMITS_PER_COMMAND, `${store.attempts} commits`);
      });
    },
  );

  test(
    "a store that keeps answering { ok: false }: every command fails with storage_failure, bounded",
    TIMEOUT,
    async () => {
      await watchdog(WATCHDOG_MS, async () => {
        const store = faultyStore();
        const { host, threads, threadId } = await start([{ text: "hi" }], store);
        const commands: [string, () => Promise<unknown>][] = [
          ["create", () => threads.create({ requestKey: "c2" })],
          ["fork", () => threads.fork({ threadId, requestKey: "f" })],
          ["send", () => threads.send({ threadId, requestKey: "s", input: { text: "x" } })],
          ["setTitle", () => threads.setTitle({ threadId, requestKey: "t", title: "x" })],
          ["delete", () => threads.delete({ threadId, requestKey: "d" })],
        ];
        for (const [name, command] of commands) {
          store.faults.staleCommits = 1_000_000;
          const before = store.attempts;
          await rejectsWith(command(), "storage_failure").catch((error) => {
            throw new Error(`${name}: ${error.message}`);
          });
          const used = store.attempts - before;
          assert.ok(used <= MAX_COMMITS_PER_COMMAND, `${name} made ${used} commits`);
        }
        store.faults.staleCommits = 0;
        // Nothing was consumed: the thread is still there and usable.
        const { view } = await threads.setTitle({ threadId, requestKey: "t", title: "x" });
        assert.equal(view.title, "x");
        assert.deepEqual(lastTurn(view), { outcome: undefined, code: undefined });
        await host.shutdown();
      });
    },
  );

  test(
    "shutdown() without a signal returns within 10 s while a store commit never answers",
    TIMEOUT,
    async () => {
      await watchdog(WATCHDOG_MS, async () => {
        const store = faultyStore();
        const { host, threads, threadId } = await start(
          toolThenAnswer,
          store,
          () => (store.faults.hangCommits = true),
        );
        await threads.send({ threadId, requestKey: "s", input: { text: "go" } });
        while (!store.faults.hangCommits) await new Promise((resolve) => setTimeout(resolve, 5));
        const started = Date.now();
        await host.shutdown();
        const tookMs = Date.now() - started;
        assert.ok(tookMs < 10_000, `shutdown took ${tookMs} ms`);
        await rejectsWith(threads.view(threadId), "host_closed");
      });
    },
  );
});
