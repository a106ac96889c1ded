/**
 * Store audit, two hosts on one store (DESIGN §5: the thread record's
 * version is checked on every commit, so two processes never interleave
 * writes to one thread). A manual compaction that is a no-op leaves a record
 * (§10: "Records survive restart and forks"); a second host that had the
 * thread in memory must see that record, and its next command must not
 * overwrite it.
 */
import { after, describe, test } from "node:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import assert from "node:assert/strict";
import { type KvStore, memoryStore } from "@floret/engine";
import { libsqlStore } from "@floret/engine/libsql";
import { durableView, idle, openAudit, type Play, sameAt } from "./support/audit_store.ts";

const dir = mkdtempSync(join(tmpdir(), "floret-audit-store-hosts-"));
after(() => rmSync(dir, { recursive: true, force: true }));

const BACKENDS: { name: string; open(): KvStore }[] = [
  { name: "memory", open: () => memoryStore() },
  { name: "libSQL file", open: () => libsqlStore({ url: `file:${join(dir, "hosts.db")}` }) },
];

describe("store audit: a no-op compaction on one host, seen and kept by another", () => {
  for (const backend of BACKENDS) {
    test(`on ${backend.name}`, async () => {
      const store = backend.open();
      const plays: Play[] = [{ text: "one" }];
      const a = await openAudit(store, plays);
      const { threadId } = await a.threads.create({ requestKey: "create" });
      await a.threads.send({ threadId, requestKey: "s1", input: { text: "hi" } });
      await idle(a.threads, threadId);
      // The second host has the thread in memory before the compaction.
      const otherPlays: Play[] = [{ text: "two" }];
      const b = await openAudit(store, otherPlays);
      await b.threads.view(threadId);

      const compacted = await a.threads.compact({ threadId, requestKey: "k" });
      assert.equal(compacted.outcome, "noop");
      const records = (await a.threads.context(threadId)).compactions;
      assert.deepEqual(records.map((r) => r.status), ["noop"]);
      // The other host reads the store: it shows the record too.
      sameAt((await b.threads.context(threadId)).compactions, records, "the other host's records");

      // Its next command lands after the record, never over it.
      await b.threads.send({ threadId, requestKey: "s2", input: { text: "again" } });
      await idle(b.threads, threadId);
      const c = await openAudit(store, []);
      for (const host of [a, b, c]) {
        sameAt((await host.threads.context(threadId)).compactions, records, "records kept");
        assert.deepEqual(
          (await host.threads.view(threadId)).items.map((item) => item.text),
          ["hi", "one", "again", "two"],
        );
      }
      sameAt(
        durableView(await c.threads.view(threadId)),
        durableView(await a.threads.view(threadId)),
        "a fresh host and the first",
      );
      // A replay of the compaction returns its outcome and adds nothing.
      assert.equal((await c.threads.compact({ threadId, requestKey: "k" })).outcome, "noop");
      sameAt((await c.threads.context(threadId)).compactions, records, "after the replay");
      for (const host of [a, b, c]) await host.host.shutdown();
      await store.close();
    });
  }
});
