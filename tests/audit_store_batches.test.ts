/**
 * Store audit: update batches are the subscriber's own. A host applies
 * batches to its view in place, so it edits what they carry (items,
 * component values); that must change nothing the engine shows afterwards
 * (views, history pages, a restarted host agree) and nothing another
 * subscriber received. The same holds for observation events that host
 * code edits in `onEvent`.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { memoryStore, type ThreadService, type ThreadUpdate } from "@floret/engine";
import {
  durableView,
  idle,
  openAudit,
  type Play,
  round,
  sameAt,
  scribble,
} from "./support/audit_store.ts";

/** The view and every 6-item history page. */
async function shown(threads: ThreadService, threadId: string) {
  const pages = [];
  let before: string | undefined;
  for (;;) {
    const page = await threads.history(threadId, before ? { limit: 6, before } : { limit: 6 });
    pages.push(structuredClone(page));
    if (!page.hasMore) break;
    before = page.before;
  }
  return { view: durableView(await threads.view(threadId)), pages };
}

describe("store audit: update batches edited by a subscriber", () => {
  test("change nothing the engine shows, stores, or another subscriber got", async () => {
    const store = memoryStore();
    const plays: Play[] = [];
    const a = await openAudit(store, plays);
    const { threadId } = await a.threads.create({ requestKey: "create" });
    const stop = new AbortController();
    const careless = a.threads.subscribe(threadId, { signal: stop.signal });
    const careful = a.threads.subscribe(threadId, { signal: stop.signal });
    const kept: { update: ThreadUpdate; copy: ThreadUpdate }[] = [];
    const reading = Promise.all([
      (async () => {
        for await (const update of careless) scribble(update);
      })(),
      (async () => {
        for await (const update of careful) kept.push({ update, copy: structuredClone(update) });
      })(),
    ]);
    await round(a, plays, threadId, "r1");
    await idle(a.threads, threadId);
    const live = await shown(a.threads, threadId);
    stop.abort();
    await reading;
    assert.ok(
      kept.some((k) =>
        k.update.type === "batch" && k.update.ops.some((op) => (op as { op: string }).op === "add")
      ),
      "items were added through batches",
    );
    for (const { update, copy } of kept) sameAt(update, copy, "the careful subscriber's batch");
    const b = await openAudit(store, []);
    sameAt(await shown(b.threads, threadId), live, "a restarted host");
    // What the live host shows is what it stored: every item's id is an engine id.
    for (const item of (live.view as { items: { id: string }[] }).items) {
      assert.doesNotMatch(item.id, /scribbled/);
    }
    await a.host.shutdown();
    await b.host.shutdown();
  });

  test("observation events edited by onEvent change nothing shown or stored", async () => {
    const store = memoryStore();
    const plays: Play[] = [];
    let events = 0;
    const a = await openAudit(store, plays, { written: [] }, (event) => {
      events++;
      scribble(event);
    });
    const { threadId } = await a.threads.create({ requestKey: "create" });
    await round(a, plays, threadId, "r1");
    await idle(a.threads, threadId);
    assert.ok(events > 20, `${events} events`);
    const live = await shown(a.threads, threadId);
    const figures = structuredClone(await a.threads.context(threadId));
    const b = await openAudit(store, []);
    sameAt(await shown(b.threads, threadId), live, "a restarted host");
    sameAt(structuredClone(await b.threads.context(threadId)), figures, "context figures");
    await a.host.shutdown();
    await b.host.shutdown();
  });
});
