/**
 * History pages read cold (a host that has not loaded the thread reads only
 * the page's turns from the journal) equal the pages of a host that has the
 * thread in memory, and both equal a slice of the full view: for threads with
 * tools, approvals, questions, compactions, steers, cancels, retries, failures
 * and forks, for several limits and every cursor.
 */
import { after, describe, test } from "node:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import assert from "node:assert/strict";
import {
  defineAgent,
  type KvStore,
  memoryStore,
  openHost,
  type ProviderRequest,
  type ThreadItem,
  type ThreadService,
} from "@floret/engine";
import { scriptedGateway, type ScriptStep } from "@floret/engine/testing";
import { denoKvStore } from "@floret/engine/deno-kv";
import { libsqlStore } from "@floret/engine/libsql";
import { addTool, FAST_RETRY } from "./support/engine.ts";
import { isCode, keepOpen, local, writeTool } from "./support/interactions.ts";
import { skipOffDeno } from "./support/skip.ts";

const SYSTEM = "You are a paging test agent.";

/** A gateway that answers summary requests itself and plays `plays` for the rest. */
function playGateway(plays: ScriptStep[]) {
  const answer = (request: ProviderRequest): ScriptStep => {
    const first = request.messages[0] as { role: string; text?: string };
    if (first.role === "system" && first.text !== SYSTEM) return { text: "SUMMARY" };
    return plays.shift() ?? { text: "default answer" };
  };
  return scriptedGateway(Array.from({ length: 2000 }, () => answer));
}

async function openEngine(store: KvStore, plays: ScriptStep[]) {
  const host = await openHost({ store: keepOpen(store) });
  const threads = host.threads({
    agent: defineAgent({
      id: "pager",
      systemPrompt: SYSTEM,
      gateway: playGateway(plays),
      tools: [addTool(), writeTool([])],
      providerRetry: FAST_RETRY,
      // Small enough that long inputs compact, automatically and by hand.
      context: { windowTokens: 6000 },
    }),
  });
  return { host, threads };
}

const idle = (threads: ThreadService, threadId: string) =>
  threads.waitForIdle(threadId, { timeoutMs: 10_000 });

/** One round of every kind of turn the view shows, on one thread. */
async function round(threads: ThreadService, plays: ScriptStep[], threadId: string, r: string) {
  let n = 0;
  const key = (what: string) => `${threadId}:${r}:${what}:${++n}`;
  const send = async (text: string, steps: ScriptStep[]) => {
    plays.push(...steps);
    await threads.send({ threadId, requestKey: key("send"), input: { text } });
    return await idle(threads, threadId);
  };
  await send(`add ${r}`, [{
    // A call id with colons: tool item ids end with it.
    toolCalls: [{ name: "add", arguments: { a: 1, b: 2 }, callId: `add:${r}:1` }],
  }, {
    text: `sum ${r}`,
  }]);
  for (const decision of ["approve", "deny"] as const) {
    const waiting = await send(`write ${r} ${decision}`, [{
      toolCalls: [{ name: "write", arguments: { line: r } }],
    }]);
    plays.push({ text: `after ${decision}` });
    await threads.respond({
      threadId,
      requestKey: key("respond"),
      interactionId: waiting.pending[0].id,
      decision,
    });
    await idle(threads, threadId);
  }
  // A queued input handed over by a completed turn: its admission shares the commit of that
  // turn's last step, whose items the new turn's ordinal must count.
  const held = await send(`hand ${r}`, [{
    toolCalls: [{ name: "write", arguments: { line: r } }],
  }]);
  await threads.send({ threadId, requestKey: key("send"), input: { text: `queued ${r}` } });
  plays.push({ text: `handed ${r}`, reasoning: "done writing" }, { text: `queued answer ${r}` });
  await threads.respond({
    threadId,
    requestKey: key("respond"),
    interactionId: held.pending[0].id,
    decision: "approve",
  });
  await idle(threads, threadId);
  const asked = await send(`ask ${r}`, [{
    toolCalls: [{
      name: "ask_user",
      arguments: { questions: [{ id: "q", prompt: "Which?", options: ["a", "b"] }] },
    }],
  }]);
  plays.push({ text: "thanks" });
  await threads.respond({
    threadId,
    requestKey: key("answer"),
    interactionId: asked.pending[0].id,
    answers: [{ questionId: "q", value: "a" }],
  });
  await idle(threads, threadId);
  await send(`long ${r} ${"words ".repeat(1500)}`, [{
    text: `long answer ${r}`,
    reasoning: "thinking it over",
  }]);
  await threads.compact({ threadId, requestKey: key("compact") });
  // The steer restarts the step; the cancel then stops the second stream, keeping its text.
  plays.push({ hang: true, text: "partial" }, { hang: true, text: "partial again" });
  await threads.send({ threadId, requestKey: key("send"), input: { text: `hang ${r}` } });
  await liveAfter(threads, threadId, `hang ${r}`);
  await local({ threads } as never).steer({ threadId, requestKey: key("steer"), text: "also" });
  await liveAfter(threads, threadId, "also");
  await threads.cancel({ threadId, requestKey: key("cancel") });
  await idle(threads, threadId);
  plays.push({ text: `retried ${r}` });
  await threads.retry({ threadId, requestKey: key("retry") });
  await idle(threads, threadId);
  await send(`fail ${r}`, [{ error: { retry: "never", message: "no" } }]);
}

/** Waits until a live item streams after the user item with this text. */
async function liveAfter(threads: ThreadService, threadId: string, text: string) {
  for (;;) {
    const items = (await threads.view(threadId)).items;
    const at = items.findLastIndex((item) => item.kind === "user" && item.text === text);
    if (at >= 0 && items.slice(at + 1).some((item) => item.live)) return;
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

/** The page a slice of the full view gives. */
function expectedPage(items: ThreadItem[], limit: number, before?: string) {
  const end = before === undefined ? items.length : items.findIndex((item) => item.id === before);
  const start = Math.max(0, end - limit);
  const page: { items: ThreadItem[]; before?: string; hasMore: boolean } = {
    items: items.slice(start, end),
    hasMore: start > 0,
  };
  if (start > 0) page.before = items[start].id;
  return page;
}

/** A store that counts the rows its listings return. */
function counting(store: KvStore): KvStore & { rows: number } {
  const counted = {
    rows: 0,
    getMany: (keys: Parameters<KvStore["getMany"]>[0]) => store.getMany(keys),
    list: async (...args: Parameters<KvStore["list"]>) => {
      const rows = await store.list(...args);
      counted.rows += rows.length;
      return rows;
    },
    commit: (op: Parameters<KvStore["commit"]>[0]) => store.commit(op),
    close: async () => {},
  };
  return counted;
}

/** A store that reads like a journal of an earlier release: turn starts carry no ordinal. */
function withoutOrdinals(store: KvStore): KvStore {
  const strip = (value: Uint8Array): Uint8Array => {
    const text = new TextDecoder().decode(value);
    if (!text.includes('"turn_started"')) return value;
    const entry = JSON.parse(text);
    delete entry.ordinal;
    return new TextEncoder().encode(JSON.stringify(entry));
  };
  return {
    getMany: async (keys) =>
      (await store.getMany(keys)).map((row) => row && { ...row, value: strip(row.value) }),
    list: async (selector, options) =>
      (await store.list(selector, options)).map((row) => ({ ...row, value: strip(row.value) })),
    commit: (op) => store.commit(op),
    close: async () => {},
  };
}

const deno = (globalThis as { Deno?: { openKv(path?: string): Promise<unknown> } }).Deno;
const dir = mkdtempSync(join(tmpdir(), "floret-history-paging-"));
after(() => rmSync(dir, { recursive: true, force: true }));

/** The stores the cold path is checked on: each one's reverse range scans serve it. */
const STORES: { name: string; skip: string | false; open(): Promise<KvStore> }[] = [
  { name: "memory", skip: false, open: () => Promise.resolve(memoryStore()) },
  {
    name: "libSQL",
    skip: false,
    open: () => Promise.resolve(libsqlStore({ url: `file:${join(dir, "paging.db")}` })),
  },
  {
    name: "Deno KV",
    skip: skipOffDeno(import.meta.url),
    open: async () => denoKvStore(await deno!.openKv(":memory:"), { closeKv: true }),
  },
];

/** Builds three threads on `store` and compares every page cold, warm and from the view. */
async function equivalence(store: KvStore): Promise<void> {
  const plays: ScriptStep[] = [];
  const a = await openEngine(store, plays);
  const { threadId } = await a.threads.create({ requestKey: "create" });
  await round(a.threads, plays, threadId, "r1");
  const mid = (await a.threads.view(threadId)).items.find((item) => item.text === "add r1")!;
  await round(a.threads, plays, threadId, "r2");
  // A fork inside the history, grown further, and a fork of that fork at its end.
  const fork = await a.threads.fork({ threadId, requestKey: "fork", atItemId: mid.id });
  await round(a.threads, plays, fork.threadId, "f1");
  const forkOfFork = await a.threads.fork({ threadId: fork.threadId, requestKey: "fork2" });
  await round(a.threads, plays, forkOfFork.threadId, "g1");
  const figures = await a.threads.context(threadId);
  assert.ok(
    figures.compactions.some((record) => record.status === "compacted"),
    "the script compacts",
  );

  const coldStore = counting(store);
  const b = await openEngine(coldStore, []);
  const old = await openEngine(withoutOrdinals(store), []);
  for (const id of [threadId, fork.threadId, forkOfFork.threadId]) {
    const full = (await a.threads.view(id)).items;
    assert.ok(full.length > 20, `thread ${id} has ${full.length} items`);
    assert.ok(full.some((item) => item.interaction) && full.some((item) => item.tool));
    for (const limit of [1, 2, 3, 7, 50]) {
      for (const before of [undefined, ...full.map((item) => item.id)]) {
        const expected = expectedPage(full, limit, before);
        const what = `${id} limit ${limit} before ${before}`;
        assert.deepEqual(
          await a.threads.history(id, { limit, before }),
          expected,
          `warm ${what}`,
        );
        assert.deepEqual(
          await b.threads.history(id, { limit, before }),
          expected,
          `cold ${what}`,
        );
      }
      // A journal without ordinals reads the whole path and gives the same pages.
      assert.deepEqual(
        await old.threads.history(id, { limit, before: full[10].id }),
        expectedPage(full, limit, full[10].id),
      );
    }
  }

  // A cold latest page reads a fraction of what loading the thread reads.
  for (const r of ["r3", "r4"]) await round(a.threads, plays, threadId, r);
  coldStore.rows = 0;
  await b.threads.history(threadId, { limit: 5 });
  const pageRows = coldStore.rows;
  coldStore.rows = 0;
  await b.threads.view(threadId);
  const loadRows = coldStore.rows;
  assert.ok(pageRows * 3 < loadRows, `page read ${pageRows} rows, a load ${loadRows}`);
  for (const host of [a, b, old]) await host.host.shutdown();
}

/** A store whose journal entries all read as committed at `at`. */
function withClock(store: KvStore, at: string): KvStore {
  const shift = (value: Uint8Array): Uint8Array => {
    const text = new TextDecoder().decode(value);
    if (!text.includes('"kind":')) return value;
    const entry = JSON.parse(text);
    if (typeof entry.seq !== "number" || typeof entry.at !== "string") return value;
    return new TextEncoder().encode(JSON.stringify({ ...entry, at }));
  };
  return {
    getMany: async (keys) =>
      (await store.getMany(keys)).map((row) => row && { ...row, value: shift(row.value) }),
    list: async (selector, options) =>
      (await store.list(selector, options)).map((row) => ({ ...row, value: shift(row.value) })),
    commit: (op) => store.commit(op),
    close: async () => {},
  };
}

describe("history paging", () => {
  for (const backend of STORES) {
    test(
      `on ${backend.name}: cold pages equal warm pages equal slices of the view, for every cursor and several limits`,
      {
        skip: backend.skip,
      },
      async () => {
        const store = await backend.open();
        try {
          await equivalence(store);
        } finally {
          await store.close();
        }
      },
    );
  }
  test("cursors are found whatever the entries' clocks say (times before and after the ids')", async () => {
    const store = memoryStore();
    const plays: ScriptStep[] = [];
    const a = await openEngine(store, plays);
    const { threadId } = await a.threads.create({ requestKey: "create" });
    await round(a.threads, plays, threadId, "r1");
    await round(a.threads, plays, threadId, "r2");
    for (const at of ["2000-01-01T00:00:00.000Z", "2999-01-01T00:00:00.000Z"]) {
      // Every entry reads as committed at `at`: the time search lands at an end of the path.
      const skewed = withClock(store, at);
      const warm = await openEngine(skewed, []);
      const cold = await openEngine(skewed, []);
      const full = (await warm.threads.view(threadId)).items;
      for (const before of [full[3].id, full[full.length >> 1].id, full.at(-1)!.id]) {
        const expected = expectedPage(full, 5, before);
        assert.deepEqual(await cold.threads.history(threadId, { limit: 5, before }), expected);
      }
      for (const host of [warm, cold]) await host.host.shutdown();
    }
    await a.host.shutdown();
  });

  test("unknown cursors are invalid_input and unknown threads thread_not_found, cold and warm", async () => {
    const store = memoryStore();
    const plays: ScriptStep[] = [];
    const a = await openEngine(store, plays);
    const { threadId } = await a.threads.create({ requestKey: "create" });
    plays.push({ text: "hi" });
    await a.threads.send({ threadId, requestKey: "s", input: { text: "hello" } });
    await idle(a.threads, threadId);
    const b = await openEngine(store, []);
    const bad = [
      "nope",
      "turn_01jd0000000000000000000:user",
      "run_01jd0000000000000000000:0:assistant",
      "interaction_01jd0000000000000000000:item",
      "x:y:tool:z",
    ];
    for (const threads of [b.threads, a.threads]) {
      for (const before of bad) {
        await assert.rejects(threads.history(threadId, { before }), isCode("invalid_input"));
      }
      await assert.rejects(threads.history("thread_nope"), isCode("thread_not_found"));
      await assert.rejects(threads.history(threadId, { limit: 0 }), isCode("invalid_input"));
    }
    const cold = await b.threads.history(threadId);
    assert.deepEqual(cold, { items: (await a.threads.view(threadId)).items, hasMore: false });
    const empty = await a.threads.create({ requestKey: "empty" });
    assert.deepEqual(await b.threads.history(empty.threadId), { items: [], hasMore: false });
    await a.threads.delete({ threadId, requestKey: "del" });
    await assert.rejects(b.threads.history(threadId), isCode("thread_not_found"));
    for (const host of [a, b]) await host.host.shutdown();
  });
});
