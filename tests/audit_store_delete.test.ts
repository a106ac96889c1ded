/**
 * Store audit: deleting a thread keeps what its forks need (DESIGN §5) and
 * reaches its children (§8, §10): the forks show what they showed, live and
 * after a restart; the deleted thread and its children are
 * `thread_not_found` and out of every listing, live and after a restart.
 */
import { after, describe, test } from "node:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import assert from "node:assert/strict";
import { isFloretError, type KvStore, memoryStore, type ThreadService } from "@floret/engine";
import { libsqlStore } from "@floret/engine/libsql";
import { durableView, openAudit, type Play, round, sameAt } from "./support/audit_store.ts";

const dir = mkdtempSync(join(tmpdir(), "floret-audit-store-delete-"));
after(() => rmSync(dir, { recursive: true, force: true }));

async function shown(threads: ThreadService, threadId: string) {
  const pages = [];
  let before: string | undefined;
  for (;;) {
    const page = await threads.history(threadId, before ? { limit: 4, before } : { limit: 4 });
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

const gone = (error: unknown) => isFloretError(error) && error.code === "thread_not_found";

async function assertGone(threads: ThreadService, ids: string[]) {
  const listed = (await threads.list({ limit: 500 })).threads.map((t) => t.threadId);
  for (const id of ids) {
    assert.ok(!listed.includes(id), `${id} is listed`);
    await assert.rejects(threads.view(id), gone);
    await assert.rejects(threads.history(id, { limit: 3 }), gone);
    await assert.rejects(threads.context(id), gone);
    await assert.rejects(threads.list({ parentThreadId: id }), gone);
  }
}

const BACKENDS: { name: string; open(): KvStore }[] = [
  { name: "memory", open: () => memoryStore() },
  { name: "libSQL file", open: () => libsqlStore({ url: `file:${join(dir, "delete.db")}` }) },
];

describe("store audit: a deleted source keeps its forks whole", () => {
  for (const backend of BACKENDS) {
    test(`on ${backend.name}, live and after a restart`, async () => {
      const store = backend.open();
      const plays: Play[] = [];
      const a = await openAudit(store, plays);
      const { threadId } = await a.threads.create({ requestKey: "source" });
      await round(a, plays, threadId, "r1");
      const items = (await a.threads.view(threadId)).items;
      const mid = await a.threads.fork({
        threadId,
        requestKey: "mid",
        atItemId: items[items.length >> 1].id,
      });
      const end = await a.threads.fork({ threadId, requestKey: "end" });
      const ofFork = await a.threads.fork({ threadId: mid.threadId, requestKey: "of fork" });
      const forks = [mid.threadId, end.threadId, ofFork.threadId];
      const before = [];
      for (const id of forks) before.push(await shown(a.threads, id));
      const children = (await a.threads.list({ parentThreadId: threadId })).threads
        .map((t) => t.threadId);
      assert.equal(children.length, 1);

      await a.threads.delete({ threadId, requestKey: "delete" });
      await assertGone(a.threads, [threadId, ...children]);
      for (const [i, id] of forks.entries()) {
        sameAt(await shown(a.threads, id), before[i], `fork ${i} after the delete`);
      }
      // A replayed delete succeeds.
      await a.threads.delete({ threadId, requestKey: "delete" });
      await a.host.shutdown();

      const b = await openAudit(store, []);
      await assertGone(b.threads, [threadId, ...children]);
      for (const [i, id] of forks.entries()) {
        sameAt(await shown(b.threads, id), before[i], `fork ${i} after a restart`);
      }
      const listed = (await b.threads.list({ limit: 500 })).threads.map((t) => t.threadId);
      assert.deepEqual(listed.toSorted(), forks.toSorted());
      await b.host.shutdown();
      await store.close();
    });
  }
});
