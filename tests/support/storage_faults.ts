/**
 * Storage fault injection at every commit point, over any store. A scripted
 * tool conversation runs once on a counting store to learn its commit points;
 * then, for every point k and every fault kind, it runs again on a store whose
 * commits fail from the k-th one until the outage clears. Every command must
 * either complete or fail with `storage_failure`; the stored journal must stay
 * sound at every moment we look; no side effect may run twice; and once the
 * store answers again the thread must settle by itself and take new commands.
 *
 * The store under the fault is a parameter, so the same matrix runs over the
 * memory store (tests/storage_faults.test.ts) and over Deno KV
 * (tests/storage_faults_deno_kv.test.ts).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { defineAgent, isFloretError, openHost } from "@floret/engine";
import type { Host, KvStore, ThreadService } from "@floret/engine";
import { conversationGateway, recordTool } from "./conversation_gateway.ts";
import { FAULT_KINDS, type FaultKind, type FaultyStore, faultyStore } from "./faulty_store.ts";
import { journalViolations, readThread, requestKeyCounts } from "./journal_reader.ts";

/** Opens a fresh, empty store for one run of the conversation (the fault wraps it). */
export type InnerStore = () => Promise<KvStore>;

/** How long the store stays down after its first failed commit. */
const OUTAGE_MS = 60;
/** How long a thread may take to settle once the store answers again. */
const WAIT_MS = 3_000;

interface Outcome {
  /** Commits up to the end of the conversation, before the command that follows the fault. */
  commits: number;
  /** Commits that failed by the fault (0: the point was never reached). */
  faults: number;
  failedCommands: string[];
  problems: string[];
}

/** A thread service over `store`, with a counter of side effects per call id. */
async function open(store: FaultyStore, effects: Map<string, number>): Promise<{
  host: Host;
  threads: ThreadService;
}> {
  const host = await openHost({ store });
  const agent = defineAgent({
    id: "faults",
    systemPrompt: "Fault injection.",
    gateway: conversationGateway(),
    tools: [recordTool((callId) => void effects.set(callId, (effects.get(callId) ?? 0) + 1))],
    providerRetry: { delaysMs: [1, 1, 1, 1] },
  });
  return { host, threads: host.threads({ agent }) };
}

/** Ends the outage `OUTAGE_MS` after the store first failed; stops with `stop()`. */
function outageClock(store: FaultyStore): { stop(): void } {
  let firstFault: number | undefined;
  const timer = setInterval(() => {
    if (store.faults === 0) return;
    firstFault ??= Date.now();
    if (Date.now() - firstFault >= OUTAGE_MS) store.clear();
  }, 5);
  return { stop: () => clearInterval(timer) };
}

/** Runs the conversation with the outage starting at commit `failAt` (0: no fault). */
async function conversation(
  inner: InnerStore,
  failAt: number,
  kind: FaultKind,
): Promise<Outcome> {
  const store = faultyStore(await inner(), { failAt, kind });
  const clock = outageClock(store);
  const effects = new Map<string, number>();
  const failedCommands: string[] = [];
  const problems: string[] = [];
  let threadId: string | undefined;
  let openedHost: Host | undefined;
  /** Runs one command: it completes, or fails with storage_failure and leaves a sound journal. */
  const attempt = async <T>(name: string, command: () => Promise<T>): Promise<T | undefined> => {
    try {
      return await command();
    } catch (error) {
      if (!isFloretError(error, "storage_failure")) {
        problems.push(`${name} failed with ${String(error)}`);
        return undefined;
      }
      failedCommands.push(name);
      if (threadId !== undefined) problems.push(...await journalViolations(store, threadId));
      return undefined;
    }
  };
  try {
    let opened = await attempt("openHost", () => open(store, effects));
    if (!opened) {
      store.clear();
      opened = await open(store, effects);
    }
    const { host, threads } = opened;
    openedHost = host;
    const create = () => threads.create({ requestKey: "create" });
    const created = await attempt("create", create) ?? (store.clear(), await create());
    threadId = created.threadId;
    const id = threadId;
    const sends = [
      { requestKey: "s1", text: "tools:2 first" },
      { requestKey: "s2", text: "second" },
    ];
    for (const send of sends) {
      const sent = await attempt(
        send.requestKey,
        () =>
          threads.send({ threadId: id, requestKey: send.requestKey, input: { text: send.text } }),
      );
      if (!sent) {
        // The same key again, once the store answers: admitted once, or the result it already has.
        store.clear();
        await threads.waitForIdle(id, { timeoutMs: WAIT_MS });
        await threads.send({
          threadId: id,
          requestKey: send.requestKey,
          input: { text: send.text },
        });
      }
      await attempt(
        `${send.requestKey}:wait`,
        () => threads.waitForIdle(id, { timeoutMs: WAIT_MS }),
      );
      problems.push(...await journalViolations(store, id));
    }
    const commits = store.commits;
    // The fault is gone now: the thread settles by itself and takes new commands.
    store.clear();
    const settled = await threads.waitForIdle(id, { timeoutMs: WAIT_MS });
    if (settled.status !== "idle") problems.push(`settled as ${settled.status}`);
    await threads.send({ threadId: id, requestKey: "s3", input: { text: "tools:1 third" } });
    const after = await threads.waitForIdle(id, { timeoutMs: WAIT_MS });
    if (after.turns.at(-1)?.outcome !== "completed") {
      problems.push(`the command after the fault ended ${after.turns.at(-1)?.outcome}`);
    }
    problems.push(...await journalViolations(store, id));
    const keys = requestKeyCounts(await readThread(store, id));
    for (const key of ["s1", "s2", "s3"]) {
      if (keys.get(key) !== 1) {
        problems.push(`${key} is in the journal ${keys.get(key) ?? 0} times`);
      }
    }
    for (const [callId, count] of effects) {
      if (count > 1) problems.push(`side effect of ${callId} ran ${count} times`);
    }
    openedHost = undefined;
    await host.shutdown();
    return { commits, faults: store.faults, failedCommands, problems };
  } catch (error) {
    problems.push(`the scenario threw: ${String(error)}`);
    return { commits: store.commits, faults: store.faults, failedCommands, problems };
  } finally {
    // A scenario that threw still closes its store (a Deno KV handle would stay open).
    store.clear();
    await openedHost?.shutdown().catch(() => {});
    clock.stop();
  }
}

/**
 * Registers the fault-matrix test for the store `inner` opens.
 *
 * @param label names the store in the test name and the printed counts
 * @param inner opens a fresh, empty store for each run
 * @param options `skip` (a reason) where the store does not exist
 */
export function storageFaultTest(
  label: string,
  inner: InnerStore,
  options: { skip?: string | false } = {},
): void {
  test(`${label}: every commit point of a tool conversation survives every storage fault`, {
    skip: options.skip ?? false,
    timeout: 240_000,
  }, async () => {
    const baseline = await conversation(inner, 0, "throw");
    assert.deepEqual(baseline.problems, []);
    assert.deepEqual(baseline.failedCommands, []);
    // Commit points of the conversation up to its end (the command after the fault adds more).
    const points = baseline.commits;
    assert.ok(points >= 10, `only ${points} commits`);
    let handled = 0;
    let failedCommands = 0;
    const failures: string[] = [];
    // FLORET_FAULT_KINDS=throw,hang narrows a run by hand.
    const kinds = process.env.FLORET_FAULT_KINDS?.split(",") as FaultKind[] | undefined ??
      FAULT_KINDS;
    for (const kind of kinds) {
      for (let k = 1; k <= points; k++) {
        const outcome = await conversation(inner, k, kind);
        if (outcome.faults === 0) outcome.problems.push("the fault never fired");
        failedCommands += outcome.failedCommands.length;
        if (process.env.FLORET_FAULT_TRACE) console.log(k, kind, JSON.stringify(outcome));
        if (outcome.problems.length === 0) handled++;
        else {
          const failed = outcome.failedCommands.join(",") || "none";
          failures.push(`k=${k} ${kind} (failed: ${failed}): ${outcome.problems.join("; ")}`);
        }
      }
    }
    const total = points * kinds.length;
    console.log(
      `storage faults (${label}): ${handled}/${total} commit points handled (${points} points x ${kinds.length} kinds), ${failedCommands} commands failed with storage_failure`,
    );
    assert.deepEqual(failures, []);
    assert.equal(handled, total);
  });
}
