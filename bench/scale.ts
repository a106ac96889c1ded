/**
 * History at scale: does a read cost what it returns as a thread grows?
 * Threads of 92, 10,005 and 100,004 journal entries on the memory store and
 * on a libSQL file, measured through the public API:
 *
 * - latest `history({ limit: 50 })` page, warm (thread in memory) and cold
 *   (a host that has not loaded it: the page reads its own turns only);
 * - a page deep in the middle by cursor, warm and cold;
 * - warm `send` admission (the call returns once its turn is committed), and the
 *   same with the returned view read in full (its items and turns are copied on
 *   first read);
 * - full `view()` warm, read in full (reported only: it returns everything by contract);
 * - first read after restart: the first `view()` of a new host (a full load)
 *   against one bare range scan of the same entries through the store;
 * - host open with 10 and 10,000 threads.
 *
 * Each thread starts with one real tool turn through the API; the rest is
 * appended by direct journal commits of 5,000 entries, copies of that turn
 * (new ids, same shapes), so building the 100k thread takes seconds. The
 * last 3 entries are a manual compaction turn whose checkpoint keeps the last
 * 10 turns, as a real thread of that length would have: the model request
 * (and `view.context`'s estimate of it) is bounded by compaction, which is
 * the context issue's subject, not this one's.
 *
 *   node --import tsx bench/scale.ts [--sizes 92,10005,100004] [--stores memory,libsql]
 *
 * @module
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import {
  defineAgent,
  defineTool,
  type Gateway,
  type KvStore,
  memoryStore,
  openHost,
  type ProviderEvent,
  type ProviderRequest,
  type ThreadView,
} from "@floret/engine";
import { libsqlStore } from "@floret/engine/libsql";
import { Journal } from "../src/journal/journal.ts";
import { keys } from "../src/journal/keys.ts";
import type { Entry } from "../src/journal/entries.ts";
import { newId } from "../src/identity/ids.ts";

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i += 2) args.set(process.argv[i], process.argv[i + 1]);
const SIZES = (args.get("--sizes") ?? "92,10005,100004").split(",").map(Number);
const STORES = (args.get("--stores") ?? "memory,libsql").split(",");

/** A model that calls `add` once on a user message and answers after the result. */
const gateway: Gateway = {
  info: {
    provider: "bench",
    model: "scale",
    stateKey: "bench:scale",
    capabilities: { contextWindowTokens: 100_000_000 },
  },
  async *stream(request: ProviderRequest): AsyncGenerator<ProviderEvent> {
    const last = request.messages.at(-1)!;
    if (last.role === "tool") {
      yield { type: "text", delta: "The sum is 3. ".repeat(8) };
    } else {
      yield { type: "tool-call-start", callId: "call_1", name: "add" };
      yield { type: "tool-call-delta", callId: "call_1", argumentsDelta: '{"a":1,"b":2}' };
      yield { type: "tool-call-end", callId: "call_1" };
    }
    yield { type: "usage", usage: { inputTokens: 1, outputTokens: 1 } };
    yield { type: "finish", reason: last.role === "tool" ? "stop" : "tool_calls" };
  },
};
const add = defineTool({
  name: "add",
  description: "Add two numbers",
  input: z.object({ a: z.number(), b: z.number() }),
  execute: ({ a, b }) => String(a + b),
});
const agent = defineAgent({
  id: "scale",
  systemPrompt: "You add.",
  gateway,
  tools: [add],
  // The context of 100k entries is not this benchmark's subject.
  context: { windowTokens: 100_000_000 },
});

/** A store that survives its hosts' shutdowns (the memory store's "restart"). */
function keepOpen(store: KvStore): KvStore {
  return {
    getMany: (k) => store.getMany(k),
    list: (s, o) => store.list(s, o),
    commit: (op) => store.commit(op),
    close: async () => {},
  };
}

interface Backend {
  name: string;
  /** A store handle for a new host ("restart": nothing of the thread in engine memory). */
  open(): KvStore;
  dispose(): void;
}

function backend(name: string): Backend {
  if (name === "memory") {
    const store = memoryStore();
    return { name, open: () => keepOpen(store), dispose() {} };
  }
  const dir = mkdtempSync(join(tmpdir(), "floret-scale-"));
  return {
    name,
    open: () => libsqlStore({ url: `file:${join(dir, "scale.db")}` }),
    dispose: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/**
 * A thread of exactly `size` entries: one real tool turn (5 entries), then
 * copies of it and of a 3-entry text turn, committed straight to the journal.
 */
async function buildThread(b: Backend, size: number): Promise<{ threadId: string }> {
  const host = await openHost({ store: b.open() });
  const threads = host.threads({ agent });
  const { threadId } = await threads.create({ requestKey: newId("create") });
  await threads.send({ threadId, requestKey: "first", input: { text: "add 1 and 2" } });
  await threads.waitForIdle(threadId);
  await host.shutdown();
  const journal = await Journal.open(b.open());
  let current = (await journal.thread(threadId))!;
  const template = await journal.readPath(current.record);
  if (template.length !== 5) throw new Error(`expected a 5-entry turn, got ${template.length}`);
  let seq = 5;
  let ordinal = 3;
  // The last turn is a manual compaction (3 entries): like any long thread, this one's
  // requests start from a checkpoint, so the model's context stays bounded.
  const body = size - 3;
  let textTurns = 0;
  while ((body - 5 - 3 * textTurns) % 5 !== 0) textTurns++;
  const turnStarts: number[] = [];
  let pending: Entry[] = [];
  const flush = async () => {
    const record = { ...current.record, seq, updatedAt: new Date().toISOString() };
    const version = await journal.commit({ expected: current, record, entries: pending });
    if (version === null) throw new Error("build commit refused");
    current = { record, version };
    pending = [];
  };
  while (seq < body) {
    const turnId = newId("turn");
    const runId = newId("run");
    const at = new Date().toISOString();
    const text = seq + 3 * textTurns >= body;
    turnStarts.push(seq + 1);
    const turn = text ? [template[0], template[3], template[4]] : template;
    for (const entry of turn) {
      const copy = { ...structuredClone(entry), seq: ++seq, at, turnId } as Entry;
      if ("runId" in copy) copy.runId = runId;
      if (copy.kind === "turn_started") copy.ordinal = ordinal;
      if (copy.kind === "step" && text) copy.step = 0;
      pending.push(copy);
    }
    ordinal += text ? 2 : 3;
    if (text) textTurns--;
    if (pending.length >= 5_000) await flush();
  }
  const turnId = newId("turn");
  const at = new Date().toISOString();
  const base = { turnId, at, runId: newId("run") };
  pending.push(
    {
      ...base,
      kind: "turn_started",
      seq: ++seq,
      agentId: agent.id,
      requestKey: "compact",
      compaction: true,
      ordinal,
    },
    {
      ...base,
      kind: "compaction",
      seq: ++seq,
      operationId: newId("compaction"),
      trigger: "manual",
      status: "compacted",
      tokensBefore: 1_000_000,
      tokensAfter: 2_000,
      summary: "The user asked to add 1 and 2, many times; the answer was always 3.",
      cutSeq: turnStarts[Math.max(0, turnStarts.length - 10)],
    },
    { ...base, kind: "turn_ended", seq: ++seq, outcome: "completed" },
  );
  await flush();
  await journal.close();
  return { threadId };
}

/** Median of `rounds` timings of `body`, in ms. */
/** Reads every item and turn of a view (they are copied on first read), returning a count. */
function readAll(view: ThreadView): number {
  return view.items.length + view.turns.length;
}

async function median(rounds: number, body: () => Promise<unknown>): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const start = performance.now();
    await body();
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)];
}

function middleOf(times: number[]): number {
  const sorted = [...times].sort((a, c) => a - c);
  return sorted[Math.floor(sorted.length / 2)];
}

async function once(body: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await body();
  return performance.now() - start;
}

type Row = Record<string, number>;

async function measure(b: Backend, size: number): Promise<Row> {
  const { threadId } = await buildThread(b, size);
  // Pages are cheap: many rounds keep a collection of the big heap out of the median.
  const rounds = size > 50_000 ? 11 : 31;
  const pageRounds = 101;
  const row: Row = { entries: size };

  // First reads after a restart, each on a new host that has never loaded the thread.
  const firstPages: number[] = [];
  for (let i = 0; i < 5; i++) {
    const fresh = await openHost({ store: b.open() });
    const service = fresh.threads({ agent });
    firstPages.push(await once(() => service.history(threadId, { limit: 50 })));
    await fresh.shutdown();
  }
  row.coldFirstPage = middleOf(firstPages);
  let host = await openHost({ store: b.open() });
  let threads = host.threads({ agent });
  row.coldPage = await median(pageRounds, () => threads.history(threadId, { limit: 50 }));
  await host.shutdown();

  // A full load on a new host against one bare range scan of the same entries, taken in
  // turns several times (medians: these figures move most with the machine's load).
  const loads = size > 50_000 ? 3 : 5;
  let items = 0;
  const firstViews: number[] = [];
  const scans: number[] = [];
  for (let i = 0; i < loads; i++) {
    const store = b.open();
    let scanned = 0;
    scans.push(
      await once(async () => {
        scanned = (await store.list({
          start: keys.entry(threadId, 0),
          end: keys.entry(threadId, Number.MAX_SAFE_INTEGER),
        })).length;
      }),
    );
    if (scanned < size) throw new Error(`scan found ${scanned} of ${size} entries`);
    await store.close();
    host = await openHost({ store: b.open() });
    threads = host.threads({ agent });
    firstViews.push(
      await once(async () => {
        items = (await threads.view(threadId)).items.length;
      }),
    );
    if (i < loads - 1) await host.shutdown();
  }
  row.firstView = middleOf(firstViews);
  row.bareScan = middleOf(scans);
  row.items = items;
  const view = await threads.view(threadId);
  const middle = view.items[Math.floor(view.items.length / 2)].id;
  row.warmPage = await median(pageRounds, () => threads.history(threadId, { limit: 50 }));
  row.warmDeepPage = await median(
    pageRounds,
    () => threads.history(threadId, { limit: 50, before: middle }),
  );
  // A view's items and turns are copied when first read: read them, so this is the whole cost.
  row.warmView = await median(
    Math.min(rounds, 11),
    async () => readAll(await threads.view(threadId)),
  );
  let n = 0;
  const sends: number[] = [];
  for (let i = 0; i < Math.min(rounds, 21); i++) {
    sends.push(
      await once(() =>
        threads.send({ threadId, requestKey: `s${++n}`, input: { text: "add 1 and 2" } })
      ),
    );
    await threads.waitForIdle(threadId);
  }
  sends.sort((a, c) => a - c);
  row.warmSend = sends[Math.floor(sends.length / 2)];
  // The same admission by a caller that then reads the whole view it got back.
  const readSends: number[] = [];
  for (let i = 0; i < Math.min(rounds, 11); i++) {
    readSends.push(
      await once(async () =>
        readAll(
          (await threads.send({ threadId, requestKey: `s${++n}`, input: { text: "add 1 and 2" } }))
            .view,
        )
      ),
    );
    await threads.waitForIdle(threadId);
  }
  readSends.sort((a, c) => a - c);
  row.warmSendRead = readSends[Math.floor(readSends.length / 2)];
  await host.shutdown();

  host = await openHost({ store: b.open() });
  threads = host.threads({ agent });
  row.coldDeepPage = await median(
    pageRounds,
    () => threads.history(threadId, { limit: 50, before: middle }),
  );
  await host.shutdown();

  return row;
}

/** `openHost` on a store of `count` idle threads (built through the API). */
async function hostOpen(name: string, count: number): Promise<number> {
  const b = backend(name);
  try {
    return await openTimes(b, count);
  } finally {
    b.dispose();
  }
}

async function openTimes(b: Backend, count: number): Promise<number> {
  const host = await openHost({ store: b.open() });
  const threads = host.threads({ agent });
  for (let i = 0; i < count; i++) await threads.create({ requestKey: `open-${count}-${i}` });
  await host.shutdown();
  const times: number[] = [];
  for (let i = 0; i < 5; i++) {
    const store = b.open();
    const start = performance.now();
    const opened = await openHost({ store });
    times.push(performance.now() - start);
    await opened.shutdown();
  }
  times.sort((a, c) => a - c);
  return times[2];
}

const COLUMNS: [keyof Row | string, string][] = [
  ["entries", "entries"],
  ["items", "items"],
  ["warmPage", "latest page warm"],
  ["coldPage", "latest page cold"],
  ["coldFirstPage", "1st page after restart"],
  ["warmDeepPage", "middle page warm"],
  ["coldDeepPage", "middle page cold"],
  ["warmSend", "send admission warm"],
  ["warmSendRead", "send warm, view read"],
  ["warmView", "view() warm, read"],
  ["firstView", "1st view() after restart"],
  ["bareScan", "bare range scan"],
];

function show(ms: number): string {
  return ms < 1 ? `${(ms * 1000).toFixed(0)} µs` : `${ms.toFixed(2)} ms`;
}

for (const name of STORES) {
  const b = backend(name);
  try {
    // One untimed pass first: the first size would otherwise pay for JIT and statement caches.
    await measure(b, SIZES[0]);
    const rows: Row[] = [];
    for (const size of SIZES) rows.push(await measure(b, size));
    console.log(`\n${name}`);
    console.log(`| ${COLUMNS.map(([, label]) => label).join(" | ")} |`);
    console.log(`|${COLUMNS.map(() => " ---: |").join("")}`);
    for (const row of rows) {
      const cells = COLUMNS.map(([key]) =>
        key === "entries" || key === "items" ? row[key].toLocaleString("en") : show(row[key])
      );
      console.log(`| ${cells.join(" | ")} |`);
    }
    const first = rows[0];
    const last = rows[rows.length - 1];
    const ratios = [
      "warmPage",
      "coldPage",
      "coldFirstPage",
      "warmDeepPage",
      "coldDeepPage",
      "warmSend",
      "warmSendRead",
      "warmView",
    ]
      .map((key) => `${key} ${(last[key] / first[key]).toFixed(2)}×`);
    console.log(`largest/smallest: ${ratios.join(", ")}`);
    const loads = rows.map((row) => `${(row.firstView / row.bareScan).toFixed(2)}×`);
    console.log(`first view() / bare range scan: ${loads.join(", ")}`);
    const small = await hostOpen(name, 10);
    const big = await hostOpen(name, 10_000);
    console.log(`openHost: 10 threads ${show(small)}, 10,000 threads ${show(big)}`);
  } finally {
    b.dispose();
  }
}
