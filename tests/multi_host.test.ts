// Several host processes on one store: two and four processes with distinct
// hostIds on one libSQL file, on one database over HTTP (the test Hrana
// server) and on one PostgreSQL database (when a server is configured) send tool conversations to shared threads at once. Writes never
// interleave (gap-free seqs, every entry inside its turn), every acknowledged
// send is in the journal exactly once, every side effect ran once, and no
// host settled another's live turn. A host killed with SIGKILL has its turn
// settled by another host only after the lease lapsed.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defineAgent, openHost } from "@floret/engine";
import { type HranaServer, startHranaServer } from "./support/hrana_server.ts";
import { linesOf } from "./support/crash_harness.ts";
import { openStoreUrl } from "./support/store_url.ts";
import { freshDatabase, NO_POSTGRES } from "./support/postgres.ts";
import { skipBecause } from "./support/skip.ts";
import { runScaleChild } from "./support/scale_spawn.ts";
import { conversationGateway, recordTool } from "./support/conversation_gateway.ts";
import {
  dispatchedCalls,
  journalViolations,
  readThread,
  requestKeyCounts,
  resultStatuses,
} from "./support/journal_reader.ts";

/** The killed host's lease: short, since the test waits for it to lapse. */
const LEASE_MS = 2_000;
/**
 * Healthy hosts' leases: nothing waits for them, and they must outlast any stall of
 * a loaded machine (2 s lapsed once in a gate run beside a benchmark, and another
 * host rightly settled the turn).
 */
const HEALTHY_LEASE_MS = 30_000;
const dir = mkdtempSync(join(tmpdir(), "floret-hosts-"));
let server: HranaServer;
before(async () => {
  server = await startHranaServer(join(dir, "server"));
});
after(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

const agent = () =>
  defineAgent({
    id: "scale",
    systemPrompt: "Scale test.",
    gateway: conversationGateway(),
    tools: [recordTool(() => {})],
  });

/** Creates `n` threads with a setup host that then goes away. */
async function createThreads(url: string, n: number): Promise<string[]> {
  const host = await openHost({ store: await openStoreUrl(url), hostId: "setup" });
  const threads = host.threads({ agent: agent() });
  const ids: string[] = [];
  for (let i = 0; i < n; i++) ids.push((await threads.create({ requestKey: `c${i}` })).threadId);
  await host.shutdown();
  return ids;
}

/** A new empty database of the backend. */
function databaseUrl(backend: "file" | "http" | "postgres"): Promise<string> {
  if (backend === "postgres") return freshDatabase("hosts");
  return Promise.resolve(
    backend === "file"
      ? `file:${join(mkdtempSync(join(dir, "db-")), "shared.db")}`
      : server.newDatabaseUrl(),
  );
}
const skipOf = (backend: string) =>
  backend === "postgres" ? skipBecause(import.meta.url, NO_POSTGRES) : false;

for (const backend of ["file", "http", "postgres"] as const) {
  for (const hosts of [2, 4]) {
    test(`${hosts} hosts on one ${backend} database never interleave writes`, {
      timeout: 120_000,
      skip: skipOf(backend),
    }, async () => {
      const url = await databaseUrl(backend);
      const sideFile = join(dir, `side-${backend}-${hosts}.log`);
      const threadIds = await createThreads(url, 2);
      const children = await Promise.all(Array.from({ length: hosts }, (_, i) =>
        runScaleChild({
          url,
          sideFile,
          hostId: `host-${i}`,
          leaseTtlMs: HEALTHY_LEASE_MS,
          threadIds,
          prefix: `h${i}`,
          sends: 3,
          tools: 2,
          delayMs: 30,
        })));
      for (const child of children) assert.equal(child.code, 0, child.stderr);
      const acks = children.flatMap((child) => child.acks);
      const contended = children.reduce((sum, child) => sum + child.contended, 0);
      console.log(
        `${hosts} hosts, ${backend}: ${acks.length} sends, ${contended} sent again after 8 lost races`,
      );
      assert.equal(acks.length, hosts * 2 * 3);
      const store = await openStoreUrl(url);
      try {
        const effects = linesOf(sideFile);
        assert.equal(new Set(effects).size, effects.length, "a side effect ran twice");
        for (const threadId of threadIds) {
          assert.deepEqual(await journalViolations(store, threadId), []);
          const thread = await readThread(store, threadId);
          const keys = requestKeyCounts(thread);
          for (const ack of acks.filter((a) => a.threadId === threadId)) {
            assert.equal(keys.get(ack.requestKey), 1, `${ack.requestKey} in the journal`);
          }
          // Healthy hosts: every turn completed; none was settled by another host.
          const ends = thread.entries.filter((entry) => entry.kind === "turn_ended");
          assert.ok(ends.every((entry) => entry.outcome === "completed"), JSON.stringify(ends));
          const statuses = resultStatuses(thread);
          for (const callId of dispatchedCalls(thread)) {
            assert.equal(statuses.get(callId), "completed", callId);
          }
        }
      } finally {
        await store.close();
      }
    });
  }
}

for (const backend of ["http", "postgres"] as const) {
  test(`a killed host's turn is settled by another host only after its lease lapsed (${backend})`, {
    timeout: 60_000,
    skip: skipOf(backend),
  }, async () => {
    const url = await databaseUrl(backend);
    const [threadId] = await createThreads(url, 1);
    const killed = await runScaleChild({
      url,
      sideFile: join(dir, "side-kill.log"),
      hostId: "victim",
      leaseTtlMs: LEASE_MS,
      threadIds: [threadId],
      prefix: "v",
      sends: 1,
      tools: 1,
      delayMs: 0,
      hang: true,
    }, { killWhen: (acks) => acks.length >= 1 });
    assert.equal(killed.acks.length, 1);
    const killedAt = Date.now();
    const host = await openHost({
      store: await openStoreUrl(url),
      hostId: "survivor",
      leaseTtlMs: LEASE_MS,
    });
    const threads = host.threads({ agent: agent() });
    const id = threadId as string;
    // The lease is still live: the survivor queues behind the turn and does not take it.
    // When the send ended before the lease the dead host last stamped, it was live throughout.
    const reader = await openStoreUrl(url);
    const stamped = await readThread(reader, id).finally(() => reader.close());
    const leaseUntil = stamped.record.active?.leaseUntil;
    const early = await threads.send({
      threadId: id,
      requestKey: "early",
      input: { text: "early" },
    });
    const beforeLapse = leaseUntil !== undefined && Date.now() < leaseUntil;
    if (beforeLapse) {
      assert.equal(early.queued, true);
      assert.equal(early.view.status, "running");
    }
    await new Promise((resolve) => setTimeout(resolve, LEASE_MS + 250 - (Date.now() - killedAt)));
    // Lapsed: the next command settles the dead host's turn, then runs its own.
    const late = await threads.send({ threadId: id, requestKey: "late", input: { text: "late" } });
    assert.equal(late.queued, false);
    const settled = await threads.waitForIdle(id, { timeoutMs: 20_000 });
    const victim = settled.turns.find((turn) => turn.turnId === killed.acks[0]?.turnId);
    assert.equal(victim?.outcome, "interrupted");
    assert.equal(settled.turns.at(-1)?.outcome, "completed");
    assert.ok(beforeLapse, "the survivor started too late to check the live lease");
    await host.shutdown();
  });
}
