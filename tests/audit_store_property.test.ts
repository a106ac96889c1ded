/**
 * Store audit, property: random command sequences (sends that answer, call
 * tools with structured results, ask for approval or ask the user; sends
 * while waiting, which queue; approvals, denials, answers, cancels, retries,
 * titles, manual compactions, forks, steers, queue promotion and deletion,
 * commands issued without awaiting, restarts in the middle) on a scripted
 * gateway. After each sequence a new host on the same store must show, for
 * every thread, the same view, history pages and context figures as the live
 * host (and so must the new host of a restart in the middle); a second
 * host that only reads must show the same after every settled command; and
 * every error a command gave must be one the contract names for it.
 *
 * `FLORET_AUDIT_RUNS` sets the number of sequences; `FLORET_AUDIT_SEED`
 * replays a failing seed.
 */
import { after, describe, test } from "node:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import assert from "node:assert/strict";
import process from "node:process";
import fc from "fast-check";
import { libsqlStore } from "@floret/engine/libsql";
import { isFloretError, type KvStore, memoryStore, type ThreadService } from "@floret/engine";
import {
  type AuditHost,
  durableView,
  idle,
  liveAfter,
  openAudit,
  type Play,
  sameAt,
  scribble,
} from "./support/audit_store.ts";

const RUNS = Number(process.env.FLORET_AUDIT_RUNS ?? 60);
/** A libSQL file commits to disk: fewer sequences there keep the file under its time budget. */
const LIBSQL_RUNS = Math.max(1, Math.floor(RUNS / 5));
const SEED = process.env.FLORET_AUDIT_SEED;

/** One command of a sequence; `thread` picks among the threads made so far. */
type Op =
  | { op: "send"; thread: number; answer: "text" | "tools" | "approval" | "question" | "fail" }
  | { op: "respond"; thread: number; decision: "approve" | "deny" }
  | { op: "cancel"; thread: number }
  | { op: "retry"; thread: number }
  | { op: "title"; thread: number; title: string }
  | { op: "compact"; thread: number }
  | { op: "fork"; thread: number; at: number }
  | { op: "steer"; thread: number }
  | { op: "queue"; thread: number; promote: boolean }
  | { op: "burst"; thread: number }
  | { op: "scribble"; thread: number }
  | { op: "restart"; thread: number };

const thread = fc.nat({ max: 3 });
const op: fc.Arbitrary<Op> = fc.oneof(
  {
    arbitrary: fc.record({
      op: fc.constant("send" as const),
      thread,
      answer: fc.constantFrom(
        "text" as const,
        "tools" as const,
        "approval" as const,
        "question" as const,
        "fail" as const,
      ),
    }),
    weight: 4,
  },
  fc.record({
    op: fc.constant("respond" as const),
    thread,
    decision: fc.constantFrom("approve" as const, "deny" as const),
  }),
  fc.record({ op: fc.constant("cancel" as const), thread }),
  fc.record({ op: fc.constant("retry" as const), thread }),
  fc.record({ op: fc.constant("title" as const), thread, title: fc.string({ maxLength: 12 }) }),
  fc.record({ op: fc.constant("compact" as const), thread }),
  fc.record({ op: fc.constant("fork" as const), thread, at: fc.nat({ max: 40 }) }),
  fc.record({ op: fc.constant("steer" as const), thread }),
  fc.record({ op: fc.constant("queue" as const), thread, promote: fc.boolean() }),
  fc.record({ op: fc.constant("burst" as const), thread }),
  fc.record({ op: fc.constant("scribble" as const), thread }),
  fc.record({ op: fc.constant("restart" as const), thread }),
);

/** Errors a command may give in some state (the contract names each). */
const ALLOWED: Record<string, string[]> = {
  retry: ["no_retry_target", "thread_busy"],
  compact: ["thread_busy"],
  queue: ["thread_busy"],
};

/** The steps a send's turn plays. */
function answerOf(answer: Extract<Op, { op: "send" }>["answer"], n: number): Play[] {
  switch (answer) {
    case "text":
      return [{ text: `answer ${n}`, reasoning: n % 2 ? `thought ${n}` : undefined } as Play];
    case "tools":
      return [
        {
          toolCalls: [
            { name: "add", arguments: { a: n, b: 1 } },
            { name: "info", arguments: { topic: `t${n}`, typed: n % 2 === 0 } },
            {
              name: "todo_write",
              arguments: { todos: [{ text: `todo ${n}`, status: "in_progress" }] },
            },
          ],
        },
        { text: `tools done ${n}` },
      ];
    case "approval":
      return [{ toolCalls: [{ name: "write", arguments: { line: `line ${n}` } }] }];
    case "question":
      return [{
        toolCalls: [{
          name: "ask_user",
          arguments: { questions: [{ id: "q", prompt: `question ${n}?`, options: ["x", "y"] }] },
        }],
      }];
    case "fail":
      return [{ error: { retry: "never", message: `failure ${n}` } }];
  }
}

/** Runs one op against the live host; returns nothing, throws only unexpected errors. */
async function apply(a: AuditHost, plays: Play[], ids: string[], o: Op, n: number) {
  const { threads } = a;
  const threadId = ids[o.thread % ids.length];
  const key = `${o.op}:${n}`;
  const view = await threads.view(threadId);
  switch (o.op) {
    case "send":
      // A send while busy queues; its answers are played when the queued input starts.
      plays.push(...answerOf(o.answer, n));
      await threads.send({ threadId, requestKey: key, input: { text: `input ${n}` } });
      break;
    case "respond": {
      const pending = view.pending[0];
      if (!pending) return;
      plays.push({ text: `after respond ${n}` });
      await threads.respond(
        pending.kind === "approval"
          ? { threadId, requestKey: key, interactionId: pending.id, decision: o.decision }
          : {
            threadId,
            requestKey: key,
            interactionId: pending.id,
            answers: [{ questionId: "q", value: o.decision === "approve" ? "x" : "y" }],
          },
      );
      break;
    }
    case "cancel":
      await threads.cancel({ threadId, requestKey: key });
      break;
    case "retry":
      plays.push({ text: `retried ${n}` });
      await threads.retry({ threadId, requestKey: key });
      break;
    case "title":
      await threads.setTitle({ threadId, requestKey: key, title: `title ${o.title}` });
      break;
    case "compact":
      await threads.compact({ threadId, requestKey: key });
      break;
    case "fork": {
      if (ids.length >= 4) return;
      // A fork cuts at a settled item: a live one (a step still streaming) is refused
      // (`invalid_input`), as it is in no journal yet.
      const settled = view.items.filter((item) => !item.live);
      const at = settled.length === 0 ? undefined : settled[o.at % settled.length].id;
      const fork = await threads.fork(
        at === undefined
          ? { threadId, requestKey: key }
          : { threadId, requestKey: key, atItemId: at },
      );
      ids.push(fork.threadId);
      break;
    }
    case "steer": {
      // Only from idle with an empty queue and no answers left over (a queued input that
      // never ran leaves its own), so the hanging step is this send's.
      if (view.status !== "idle" || view.queue.length > 0 || plays.length > 0) return;
      plays.push({ hang: true, text: `partial ${n}` }, { text: `steered ${n}` });
      await threads.send({ threadId, requestKey: key, input: { text: `hang ${n}` } });
      await liveAfter(threads, threadId, `hang ${n}`);
      await a.local.steer({ threadId, requestKey: `${key}:steer`, text: `steer ${n}` });
      break;
    }
    case "queue": {
      const queued = view.queue[0];
      if (!queued) return;
      if (o.promote) {
        plays.push({ text: `promoted ${n}` });
        await threads.promoteQueued({ threadId, requestKey: key, queueId: queued.id });
      } else {
        await threads.deleteQueued({ threadId, requestKey: key, queueId: queued.id });
      }
      break;
    }
    case "restart":
      // Handled by the sequence, which replaces the host.
      return;
    case "scribble":
      // A careless host edits what it got back: nothing the engine shows or stores may change.
      scribble(view);
      scribble(await threads.history(threadId, { limit: 5 }));
      scribble(await threads.context(threadId));
      break;
    case "burst": {
      // Two sends and a title, issued without awaiting: the second send queues or runs next.
      plays.push({ text: `burst a ${n}` }, { text: `burst b ${n}` });
      await Promise.all([
        threads.send({ threadId, requestKey: `${key}:a`, input: { text: `burst a ${n}` } }),
        threads.send({ threadId, requestKey: `${key}:b`, input: { text: `burst b ${n}` } }),
        threads.setTitle({ threadId, requestKey: `${key}:t`, title: `burst ${n}` }),
      ]);
      break;
    }
  }
}

/** What a host shows about one thread: view, every page of three items, context figures. */
async function shown(threads: ThreadService, threadId: string) {
  const view = durableView(await threads.view(threadId));
  const pages = [];
  let before: string | undefined;
  for (;;) {
    const page = await threads.history(
      threadId,
      before === undefined ? { limit: 3 } : { limit: 3, before },
    );
    pages.push(structuredClone(page));
    if (!page.hasMore) break;
    before = page.before;
  }
  return { view, pages, context: structuredClone(await threads.context(threadId)) };
}

async function runSequence(store: KvStore, ops: Op[]): Promise<void> {
  const plays: Play[] = [];
  let a = await openAudit(store, plays);
  const ids = [(await a.threads.create({ requestKey: "create" })).threadId];
  // A second host on the same store, which only reads: after each settled command it must
  // show what the host that ran it shows (it reads the store; nothing is pushed to it).
  const observer = await openAudit(store, []);
  let n = 0;
  for (const o of ops) {
    n++;
    if (o.op === "restart") {
      // Mid-sequence restart while nothing runs: the new host carries on from the store and
      // shows every thread as the old one did (waiting turns, queues and all).
      const views = await Promise.all(ids.map((id) => a.threads.view(id)));
      if (views.some((view) => view.status === "running" || view.status === "stopping")) continue;
      const before = [];
      for (const id of ids) before.push(await shown(a.threads, id));
      await a.host.shutdown();
      a = await openAudit(store, plays);
      for (const [i, id] of ids.entries()) {
        sameAt(await shown(a.threads, id), before[i], `thread ${i} after restart #${n}`);
      }
      continue;
    }
    const planned = plays.length;
    try {
      await apply(a, plays, ids, o, n);
    } catch (error) {
      // A refused command started nothing: its answers must not reach a later turn.
      plays.length = planned;
      const allowed = ALLOWED[o.op] ?? [];
      if (!isFloretError(error) || !allowed.includes(error.code)) {
        throw new Error(`${o.op} (#${n}) failed: ${String(error)}`, { cause: error });
      }
    }
    // Settle between commands unless the command left a turn running on purpose (steer).
    if (o.op !== "steer") {
      for (const id of ids) await idle(a.threads, id);
      const id = ids[o.thread % ids.length];
      sameAt(await shown(observer.threads, id), await shown(a.threads, id), `observer after #${n}`);
    }
  }
  // Stop what still runs (a steered turn hangs until cancelled), then settle everything.
  for (const id of ids) {
    if ((await a.threads.view(id)).status === "running") {
      await a.threads.cancel({ threadId: id, requestKey: `final cancel ${id}` });
    }
    await idle(a.threads, id);
  }
  const live = [];
  for (const id of ids) live.push(await shown(a.threads, id));
  const b = await openAudit(store, []);
  for (const [i, id] of ids.entries()) {
    sameAt(await shown(b.threads, id), live[i], `thread ${i} after a restart`);
  }
  await a.host.shutdown();
  await b.host.shutdown();
  await observer.host.shutdown();
  await store.close();
}

const dir = mkdtempSync(join(tmpdir(), "floret-audit-store-property-"));
after(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;

const BACKENDS = [
  { name: "memory", runs: RUNS, open: (): KvStore => memoryStore() },
  {
    name: "libSQL file",
    runs: LIBSQL_RUNS,
    open: (): KvStore => libsqlStore({ url: `file:${join(dir, `p${++files}.db`)}` }),
  },
];

describe("store audit: property", () => {
  for (const backend of BACKENDS) {
    test(`on ${backend.name}: a restarted host shows what the live one showed after random commands (${backend.runs} sequences)`, async () => {
      const details = await fc.check(
        fc.asyncProperty(
          fc.array(op, { minLength: 4, maxLength: 20 }),
          (ops) => runSequence(backend.open(), ops),
        ),
        {
          numRuns: backend.runs,
          seed: SEED === undefined ? undefined : Number(SEED),
          endOnFailure: true,
        },
      );
      if (details.failed) {
        const error = details.errorInstance;
        assert.fail(
          `${error instanceof Error ? error.message : String(error)}\n${
            fc.defaultReportMessage(details)
          }`,
        );
      }
      assert.equal(details.numRuns, backend.runs);
    });
  }
});
