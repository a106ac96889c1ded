/**
 * Store audit: an idle thread that the host dropped from memory (beyond the
 * bound of idle actors kept) is read back from the store, and it must show
 * exactly what it showed before it was dropped, on a memory store (whose
 * entries are encoded when first read) and on a libSQL file.
 */
import { after, describe, test } from "node:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import assert from "node:assert/strict";
import { type KvStore, memoryStore, type ThreadService } from "@floret/engine";
import { libsqlStore } from "@floret/engine/libsql";
import { durableView, idle, openAudit, type Play, round, sameAt } from "./support/audit_store.ts";

const dir = mkdtempSync(join(tmpdir(), "floret-audit-store-evicted-"));
after(() => rmSync(dir, { recursive: true, force: true }));

/** More threads than a host keeps idle in memory (512): the oldest are dropped. */
const THREADS = 600;

async function shown(threads: ThreadService, threadId: string) {
  const pages = [];
  let before: string | undefined;
  for (;;) {
    const page = await threads.history(threadId, before ? { limit: 9, before } : { limit: 9 });
    pages.push(structuredClone(page));
    if (!page.hasMore) break;
    before = page.before;
  }
  return {
    view: durableView(await threads.view(threadId)),
    pages,
    context: structuredClone(await threads.context(threadId)),
  };
}

const BACKENDS: { name: string; open(): KvStore }[] = [
  { name: "memory", open: () => memoryStore() },
  { name: "libSQL file", open: () => libsqlStore({ url: `file:${join(dir, "evicted.db")}` }) },
];

describe("store audit: a thread dropped from memory reads back as it was", () => {
  for (const backend of BACKENDS) {
    test(`on ${backend.name}`, async () => {
      const store = backend.open();
      const plays: Play[] = [];
      const a = await openAudit(store, plays);
      const { threadId } = await a.threads.create({ requestKey: "first" });
      await round(a, plays, threadId, "r1");
      const before = await shown(a.threads, threadId);
      const ids: string[] = [];
      for (let i = 0; i < THREADS; i++) {
        ids.push((await a.threads.create({ requestKey: `other ${i}` })).threadId);
      }
      // A run's end drops idle actors beyond the bound, oldest first.
      plays.push({ text: "last" });
      await a.threads.send({ threadId: ids.at(-1)!, requestKey: "last", input: { text: "go" } });
      await idle(a.threads, ids.at(-1)!);
      sameAt(await shown(a.threads, threadId), before, "read back after being dropped");
      // And the thread goes on from what was read back.
      plays.push({ text: "after" });
      await a.threads.send({ threadId, requestKey: "after", input: { text: "after" } });
      const view = await idle(a.threads, threadId);
      assert.deepEqual(view.items.slice(-2).map((item) => item.text), ["after", "after"]);
      sameAt(
        view.items.slice(0, -2),
        (before.view as { items: unknown[] }).items,
        "earlier items unchanged",
      );
      await a.host.shutdown();
      await store.close();
    });
  }
});
