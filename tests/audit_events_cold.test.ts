// Audit (round 11): observing a thread that is not in memory yet — after a
// restart (a new host on the same libSQL file). DESIGN §8's protocol is
// "subscribe, then view"; the subscriber has fallen behind nothing, so it must
// get the turn's batches, not a `resync` (over HTTP a resync ends the events
// stream, so a page watching a thread after a restart lost its stream right
// after the first view).
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defineAgent, type Host, openHost, type ThreadService } from "@floret/engine";
import { scriptedGateway } from "@floret/engine/testing";
import { libsqlStore } from "@floret/engine/libsql";
import { threadApi } from "@floret/engine/http";
import { Observer, stateOf } from "./support/audit_observer.ts";

const dir = mkdtempSync(join(tmpdir(), "floret-audit-cold-"));
after(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;

/** A thread with one completed turn, and a new host on the same file that has not touched it. */
async function restarted(): Promise<{ host: Host; threads: ThreadService; threadId: string }> {
  const url = `file:${join(dir, `cold${++files}.db`)}`;
  const agent = defineAgent({
    id: "cold",
    systemPrompt: "Cold.",
    gateway: scriptedGateway([{ text: "before the restart" }, { text: "after the restart" }]),
  });
  const first = await openHost({ store: libsqlStore({ url }) });
  const before = first.threads({ agent });
  const { threadId } = await before.create({ requestKey: "create" });
  await before.send({ threadId, requestKey: "one", input: { text: "one" } });
  await before.waitForIdle(threadId, { timeoutMs: 10_000 });
  await first.shutdown();
  const host = await openHost({ store: libsqlStore({ url }) });
  return { host, threads: host.threads({ agent }), threadId };
}

describe("observing a thread that is not in memory yet", () => {
  test("subscribe, then view, after a restart: batches follow, no resync", async () => {
    const { host, threads, threadId } = await restarted();
    const observer = await Observer.join(threads, threadId);
    await threads.send({ threadId, requestKey: "two", input: { text: "two" } });
    const final = await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
    await observer.reach(final);
    assert.equal(observer.resyncs, 0, "nothing the subscriber saw was stale");
    assert.deepEqual(observer.problems, []);
    assert.deepEqual(stateOf(observer.local), stateOf(final));
    assert.equal(final.items.at(-1)?.text, "after the restart");
    await observer.leave();
    await host.shutdown();
  });

  test("the events stream of a thread not yet loaded goes on after its view", async () => {
    const { host, threads, threadId } = await restarted();
    const app = threadApi(threads, { authorize: () => true });
    const response = await app.fetch(new Request(`http://127.0.0.1/threads/${threadId}/events`));
    assert.equal(response.status, 200);
    await threads.send({ threadId, requestKey: "two", input: { text: "two" } });
    const final = await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let text = "";
    const events = (): string[] => [...text.matchAll(/^event: (\w+)$/gm)].map((m) => m[1]!);
    while (!text.includes(`"version":${final.viewVersion},`)) {
      const chunk = await reader.read();
      if (chunk.done) break;
      text += decoder.decode(chunk.value, { stream: true });
    }
    await reader.cancel();
    assert.equal(events()[0], "view");
    assert.ok(!events().includes("resync"), `no resync: ${events().join(", ")}`);
    assert.ok(events().filter((e) => e === "batch").length > 0, "the turn's batches came");
    await host.shutdown();
  });

  test("a reload of a thread already in memory (another host wrote) still tells its subscribers to resync", async () => {
    const url = `file:${join(dir, `cold${++files}.db`)}`;
    const agent = defineAgent({
      id: "cold",
      systemPrompt: "Cold.",
      gateway: scriptedGateway([{ text: "written elsewhere" }]),
    });
    const here = await openHost({ store: libsqlStore({ url }) });
    const elsewhere = await openHost({ store: libsqlStore({ url }) });
    const threadsHere = here.threads({ agent });
    const threadsElsewhere = elsewhere.threads({ agent });
    const { threadId } = await threadsHere.create({ requestKey: "create" });
    const observer = await Observer.join(threadsHere, threadId);
    await threadsElsewhere.send({ threadId, requestKey: "one", input: { text: "one" } });
    await threadsElsewhere.waitForIdle(threadId, { timeoutMs: 10_000 });
    const view = await threadsHere.view(threadId);
    assert.equal(view.items.at(-1)?.text, "written elsewhere");
    await observer.reach(view);
    assert.equal(observer.resyncs, 1, "the subscriber's view was stale");
    assert.deepEqual(stateOf(observer.local), stateOf(view));
    await observer.leave();
    await elsewhere.shutdown();
    await here.shutdown();
  });

  test("a thread another host deleted: its subscriptions here end once this host learns it, new ones are thread_not_found", async () => {
    const url = `file:${join(dir, `cold${++files}.db`)}`;
    const agent = defineAgent({ id: "cold", systemPrompt: "Cold.", gateway: scriptedGateway([]) });
    const here = await openHost({ store: libsqlStore({ url }) });
    const elsewhere = await openHost({ store: libsqlStore({ url }) });
    try {
      const threadsHere = here.threads({ agent });
      const { threadId } = await threadsHere.create({ requestKey: "create" });
      const updates = threadsHere.subscribe(threadId)[Symbol.asyncIterator]();
      const view = await threadsHere.view(threadId);
      await elsewhere.threads({ agent }).delete({ threadId, requestKey: "delete" });
      const notFound = (error: unknown) => (error as { code?: string }).code === "thread_not_found";
      await assert.rejects(threadsHere.view(threadId), notFound);
      let next = await updates.next();
      while (!next.done && next.value.type === "batch" && next.value.version <= view.viewVersion) {
        next = await updates.next();
      }
      assert.equal(next.done, true, "the subscription ended");
      const again = threadsHere.subscribe(threadId)[Symbol.asyncIterator]();
      await assert.rejects(again.next(), notFound);
    } finally {
      await elsewhere.shutdown();
      await here.shutdown();
    }
  });
});
