/**
 * Store audit: what is stored equals what is shown. The same scripted
 * conversations (tools, structured results with and without type notes,
 * activity, approvals, a question, todos, a queued hand-over, a sub-agent, a
 * steer, a cancel, a retry, a failure, a manual compaction with a scripted
 * summary, forks, ≥ 64 items) run on a memory store and on a libSQL file.
 * Then a new host on the same store must show, for every thread (roots,
 * forks, children), the same view, every history page at every page size,
 * the same context figures and the same thread lists at every page size; the
 * raw rows decode as JSON and keep their bytes across a restart; and the two
 * stores give the same conversation up to ids and clocks.
 */
import { after, describe, test } from "node:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import assert from "node:assert/strict";
import { isFloretError, type KvStore, memoryStore, type ThreadService } from "@floret/engine";
import { libsqlStore } from "@floret/engine/libsql";
import {
  durableView,
  idle,
  liveAfter,
  openAudit,
  type Play,
  round,
  sameAt,
  storedRows,
} from "./support/audit_store.ts";

const dir = mkdtempSync(join(tmpdir(), "floret-audit-store-restart-"));
after(() => rmSync(dir, { recursive: true, force: true }));

/** Page sizes for history and list: the smallest, odd ones, the window of copy-on-read, the largest. */
const LIMITS = [1, 2, 3, 7, 64, 500];

/** Every page of a thread's history at `limit`, walking `before` cursors to the start. */
async function pagesOf(threads: ThreadService, threadId: string, limit: number) {
  const pages = [];
  let before: string | undefined;
  for (;;) {
    const page = await threads.history(
      threadId,
      before === undefined ? { limit } : { limit, before },
    );
    pages.push(structuredClone(page));
    if (!page.hasMore) return pages;
    assert.equal(typeof page.before, "string");
    before = page.before;
  }
}

/** Every page of a listing at `limit`. */
async function listPages(threads: ThreadService, limit: number, parentThreadId?: string) {
  const pages = [];
  let cursor: string | undefined;
  for (;;) {
    const options: { limit: number; cursor?: string; parentThreadId?: string } = { limit };
    if (cursor !== undefined) options.cursor = cursor;
    if (parentThreadId !== undefined) options.parentThreadId = parentThreadId;
    const page = await threads.list(options);
    pages.push(structuredClone(page));
    if (page.cursor === undefined) return pages;
    cursor = page.cursor;
  }
}

/** Everything a host shows about the store: every thread's view, pages and figures; every listing. */
async function everything(threads: ThreadService) {
  const roots = (await threads.list({ limit: 500 })).threads.map((t) => t.threadId);
  const ids: string[] = [];
  const lists: Record<string, unknown> = {};
  const visit = async (threadId: string) => {
    ids.push(threadId);
    const children = await listPages(threads, 500, threadId);
    for (const child of children[0].threads) await visit(child.threadId);
  };
  for (const id of roots) await visit(id);
  for (const limit of LIMITS) lists[`roots/${limit}`] = await listPages(threads, limit);
  const shown: Record<string, unknown> = {};
  for (const id of ids) {
    const view = await threads.view(id);
    const pages: Record<number, unknown> = {};
    for (const limit of LIMITS) {
      pages[limit] = await pagesOf(threads, id, limit);
      // Read backwards, the pages put together are the view's items.
      const items = (pages[limit] as { items: unknown[] }[]).toReversed().flatMap((p) => p.items);
      sameAt(items, structuredClone(view.items), `pages of ${limit} put together`);
    }
    lists[`children of ${id}`] = await listPages(threads, 2, id);
    shown[id] = {
      view: durableView(view),
      pages,
      context: structuredClone(await threads.context(id)),
    };
  }
  return { ids, lists, shown };
}

/** A fork of `threadId` at `cut`, as its host shows it (view, all pages of 500, figures). */
async function forkShown(threads: ThreadService, threadId: string, cut: string, key: string) {
  const fork = await threads.fork({ threadId, requestKey: key, atItemId: cut });
  return {
    returned: durableView(fork.view),
    view: durableView(await threads.view(fork.threadId)),
    pages: await pagesOf(threads, fork.threadId, 500),
    context: structuredClone(await threads.context(fork.threadId)),
  };
}

/** The conversation: three rounds on a root, a fork inside it grown by a round, a fork of that fork. */
async function converse(store: KvStore) {
  const plays: Play[] = [];
  const a = await openAudit(store, plays);
  const { threadId } = await a.threads.create({ requestKey: "create", title: "audited" });
  for (const r of ["r1", "r2", "r3"]) await round(a, plays, threadId, r);
  const items = (await a.threads.view(threadId)).items;
  const mid = items.find((item) => item.text === "sum r2")!;
  const fork = await a.threads.fork({ threadId, requestKey: "fork", atItemId: mid.id });
  await round(a, plays, fork.threadId, "f1");
  await a.threads.fork({ threadId: fork.threadId, requestKey: "fork of fork" });
  // A fork cut inside a turn (at its question): that turn reads interrupted there.
  const asked = items.find((item) => item.kind === "interaction")!;
  await a.threads.fork({ threadId, requestKey: "fork inside", atItemId: asked.id });
  // A thread left waiting: an approval pending beside a question's answer, todos, and a
  // queued input behind it (pending interactions and the queue survive a restart).
  const waiting = await a.threads.create({ requestKey: "create waiting" });
  plays.push({
    toolCalls: [
      { name: "todo_write", arguments: { todos: [{ text: "wait", status: "pending" }] } },
      { name: "write", arguments: { line: "pending line" } },
    ],
  });
  await a.threads.send({
    threadId: waiting.threadId,
    requestKey: "send waiting",
    input: { text: "write it" },
  });
  const held = await idle(a.threads, waiting.threadId);
  assert.equal(held.status, "waiting");
  await a.threads.send({
    threadId: waiting.threadId,
    requestKey: "send queued",
    input: { text: "queued behind" },
  });
  return { a, threadId, items: items.length };
}

/** The stores the conversation runs on, each a function that opens (or reopens) it. */
const BACKENDS: { name: string; opener(): () => KvStore; reopens: boolean }[] = [
  {
    name: "memory",
    reopens: false,
    opener: () => {
      const store = memoryStore();
      return () => store;
    },
  },
  {
    name: "libSQL file",
    reopens: true,
    opener: () => {
      const url = `file:${join(dir, `restart-${Math.random().toString(36).slice(2)}.db`)}`;
      return () => libsqlStore({ url });
    },
  },
];

/** Ids and clocks replaced by the order they first appear in, so two runs can be compared. */
function normalised(value: unknown): unknown {
  const names = new Map<string, string>();
  const name = (id: string) => {
    if (!names.has(id)) names.set(id, `${id.split("_")[0]}#${names.size}`);
    return names.get(id)!;
  };
  // Engine ids: a prefix, an underscore, then time-ordered and random characters.
  const idPattern = /\b[a-z]+_[0-9a-z]{18,}\b/g;
  const walk = (v: unknown, key?: string): unknown => {
    if (typeof v === "string") {
      // List cursors are opaque (they carry an update time).
      if (key === "cursor") return "<cursor>";
      if (/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/.test(v)) return "<time>";
      return v.replace(idPattern, (id) => name(id));
    }
    if (typeof v === "number" && key && /Ms$/.test(key)) return "<ms>";
    if (Array.isArray(v)) return v.map((inner) => walk(inner));
    if (v instanceof Map || v instanceof Set || v instanceof Date || v === null) return v;
    if (typeof v === "object") {
      const out: Record<string, unknown> = {};
      for (const [k, inner] of Object.entries(v as object)) out[walk(k) as string] = walk(inner, k);
      return out;
    }
    return v;
  };
  return walk(value);
}

describe("store audit: a restarted host shows what the live host showed", () => {
  const seen: Record<string, unknown> = {};
  for (const backend of BACKENDS) {
    test(`on ${backend.name}`, async () => {
      const open = backend.opener();
      const store = open();
      const { a, items, threadId } = await converse(store);
      assert.ok(items >= 64, `the root has ${items} items`);
      // Forks at many cuts, made live; after the restart the same cuts are forked again.
      const cuts = (await a.threads.view(threadId)).items.filter((_, i) => i % 6 === 0)
        .map((item) => item.id);
      const liveForks = [];
      for (const [i, cut] of cuts.entries()) {
        liveForks.push(await forkShown(a.threads, threadId, cut, `live cut ${i}`));
      }
      const live = await everything(a.threads);
      assert.ok(live.ids.length >= 7, `threads: ${live.ids.length}`);
      // A child's figures are its own agent's (the helper's default window), not the parent's 6000.
      const children = live.ids.filter((id) =>
        (live.shown[id] as { view: { parentThreadId?: string } }).view.parentThreadId
      );
      assert.ok(children.length >= 3, `children: ${children.length}`);
      for (const id of children) {
        const shown = live.shown[id] as {
          view: { context?: { windowTokens: number } };
          context: { windowTokens: number };
        };
        assert.equal(shown.view.context?.windowTokens, 128_000);
        assert.equal(shown.context.windowTokens, 128_000);
      }
      const rows = await storedRows(store);
      for (const [key, value] of rows) {
        // Index rows (their key is the fact) carry no value; every other row is JSON.
        if (value !== "") assert.doesNotThrow(() => JSON.parse(value), `row ${key} is JSON`);
      }
      // Reading everything wrote nothing.
      sameAt(await storedRows(store), rows, "rows after reads");
      await a.host.shutdown();
      sameAt(await storedRows(store), rows, "rows after shutdown");

      // A new host on the same store (and, for a file, a new store on the same file).
      let again = store;
      if (backend.reopens) {
        await store.close();
        again = open();
        sameAt(await storedRows(again), rows, "rows after reopening the file");
      }
      const b = await openAudit(again, []);
      sameAt(await everything(b.threads), live, "restarted host");
      for (const id of live.ids) await idle(b.threads, id);
      // A fork made after the restart equals the fork the live host made at the same cut.
      for (const [i, cut] of cuts.entries()) {
        sameAt(
          normalised(await forkShown(b.threads, threadId, cut, `restarted cut ${i}`)),
          normalised(liveForks[i]),
          `fork at cut ${i} after a restart`,
        );
      }
      const waiting = Object.values(live.shown).map((t) =>
        (t as { view: { status: string; queue: unknown[]; pending: unknown[] } }).view
      ).filter((view) => view.status === "waiting");
      assert.equal(waiting.length, 1);
      assert.equal(waiting[0].queue.length, 1);
      assert.equal(waiting[0].pending.length, 1);
      await b.host.shutdown();
      // The restarted host's forks added rows; every row there before is unchanged.
      const after = await storedRows(again);
      for (const [key, value] of rows) {
        if (!key.startsWith('["updated"')) assert.equal(after.get(key), value, `row ${key}`);
      }
      await again.close();
      seen[backend.name] = normalised(live);
    });
  }
  test("memory and libSQL show the same conversation, up to ids and clocks", () => {
    assert.equal(Object.keys(seen).length, 2, "both stores ran");
    sameAt(seen["libSQL file"], seen.memory, "libSQL vs memory");
  });
  for (const backend of BACKENDS) {
    test(`on ${backend.name}: the next request after a restart is the one the live host would send`, async () => {
      const open = backend.opener();
      const store = open();
      const { a, threadId } = await converse(store);
      // Live: a fork at the end has the same path; its next request is the live projection.
      const fork = await a.threads.fork({ threadId, requestKey: "fork at end" });
      const plays: Play[] = [];
      a.gateway.requests.length = 0;
      await a.threads.send({
        threadId: fork.threadId,
        requestKey: "next",
        input: { text: "next" },
      });
      await idle(a.threads, fork.threadId);
      const liveRequest = a.gateway.requests[0];
      await a.host.shutdown();
      let again = store;
      if (backend.reopens) {
        await store.close();
        again = open();
      }
      const b = await openAudit(again, plays);
      await b.threads.send({ threadId, requestKey: "next", input: { text: "next" } });
      await idle(b.threads, threadId);
      const restartedRequest = b.gateway.requests[0];
      assert.ok(
        restartedRequest.messages.some((m) => "text" in m && m.text.includes("SCRIPTED SUMMARY")),
        "the compaction's checkpoint is used after a restart",
      );
      sameAt(restartedRequest.messages, liveRequest.messages, "next request's messages");
      sameAt(restartedRequest.tools, liveRequest.tools, "next request's tools");
      assert.equal(restartedRequest.fingerprint, liveRequest.fingerprint);
      await b.host.shutdown();
      await again.close();
    });
  }
  for (const backend of BACKENDS) {
    test(`on ${backend.name}: every command replayed after a restart returns its committed result and writes nothing`, async () => {
      const open = backend.opener();
      const store = open();
      const plays: Play[] = [];
      const a = await openAudit(store, plays);
      const created = await a.threads.create({ requestKey: "c", title: "replayed" });
      const threadId = created.threadId;
      const inputs = {
        send: { threadId, requestKey: "s", input: { text: `long ${"words ".repeat(1000)}` } },
        ask: { threadId, requestKey: "ask", input: { text: "ask" } },
        compact: { threadId, requestKey: "k" },
        title: { threadId, requestKey: "t", title: "renamed" },
        cancel: { threadId, requestKey: "x" },
      };
      plays.push({ text: "long answer" });
      const sent = await a.threads.send(inputs.send);
      await idle(a.threads, threadId);
      plays.push({ text: "second answer" });
      await a.threads.send({
        threadId,
        requestKey: "s2",
        input: { text: `second ${"words ".repeat(1000)}` },
      });
      await idle(a.threads, threadId);
      const compacted = await a.threads.compact(inputs.compact);
      // Below the target: a noop, which is an operation of its own (one record, replayable).
      assert.equal(compacted.outcome, "noop");
      plays.push({ toolCalls: [{ name: "write", arguments: { line: "l" } }] });
      const asked = await a.threads.send(inputs.ask);
      const waiting = await idle(a.threads, threadId);
      const respondInput = {
        threadId,
        requestKey: "r",
        interactionId: waiting.pending[0].id,
        decision: "approve" as const,
      };
      plays.push({ text: "written" });
      await a.threads.respond(respondInput);
      await idle(a.threads, threadId);
      await a.threads.setTitle(inputs.title);
      const forkInput = { threadId, requestKey: "f", atItemId: sent.view.items[0].id };
      const forked = await a.threads.fork(forkInput);
      // The cancel stops a streaming turn (a cancel of an idle thread commits nothing).
      plays.push({ hang: true, text: "partial" });
      await a.threads.send({ threadId, requestKey: "hang", input: { text: "hang" } });
      await liveAfter(a.threads, threadId, "hang");
      await a.threads.cancel(inputs.cancel);
      const records = (await a.threads.context(threadId)).compactions;
      await a.host.shutdown();
      let again = store;
      if (backend.reopens) {
        await store.close();
        again = open();
      }
      const rows = await storedRows(again);
      const b = await openAudit(again, []);
      const view = durableView(await b.threads.view(threadId));
      // Each replay returns what was committed, and the thread as it is now.
      const replayedCreate = await b.threads.create({ requestKey: "c", title: "replayed" });
      assert.equal(replayedCreate.threadId, threadId);
      const replayedSend = await b.threads.send(inputs.send);
      assert.equal(replayedSend.turnId, sent.turnId);
      assert.equal(replayedSend.queued, false);
      sameAt(durableView(replayedSend.view), view, "send replay's view");
      assert.equal((await b.threads.send(inputs.ask)).turnId, asked.turnId);
      const replayedCompact = await b.threads.compact(inputs.compact);
      assert.equal(replayedCompact.outcome, compacted.outcome);
      sameAt((await b.threads.context(threadId)).compactions, records, "no record added");
      sameAt(durableView((await b.threads.respond(respondInput)).view), view, "respond replay");
      sameAt(durableView((await b.threads.setTitle(inputs.title)).view), view, "title replay");
      assert.equal((await b.threads.fork(forkInput)).threadId, forked.threadId);
      sameAt(durableView((await b.threads.cancel(inputs.cancel)).view), view, "cancel replay");
      // Another kind under a used key conflicts, after a restart too.
      for (const reuse of ["s", "k", "t", "r", "x"]) {
        await assert.rejects(
          b.threads.setTitle({ threadId, requestKey: reuse === "t" ? "s" : reuse, title: "other" }),
          (error: unknown) => isFloretError(error) && error.code === "request_conflict",
          `key ${reuse}`,
        );
      }
      await assert.rejects(
        b.threads.fork({ threadId, requestKey: "c" }),
        (error: unknown) => isFloretError(error) && error.code === "request_conflict",
      );
      sameAt(durableView(await b.threads.view(threadId)), view, "view after the replays");
      await b.host.shutdown();
      sameAt(await storedRows(again), rows, "replays wrote nothing");
      await again.close();
    });
  }
});
