/**
 * Bounded parent events (DESIGN §11): a child's fact reaches its parent with
 * a report preview of at most 512 bytes, a failure by its code, each message
 * within 8 KiB; `listParentEvents` pages the facts, in process and over HTTP.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { FloretError, type LocalThreadService, type ProviderRequest } from "@floret/engine";
import { childAgent, family, waitForSpawned } from "./support/subagents.ts";
import { overHttp } from "./support/over_http.ts";

const spawn = (agent: string, task: string) => ({
  name: "spawn_agent",
  arguments: { agent, task },
});
const bytes = (text: string) => new TextEncoder().encode(text).length;

function facts(request: ProviderRequest): string[] {
  return request.messages.flatMap((m) =>
    m.role === "user" && m.text.startsWith("[sub-agent ") ? [m.text] : []
  );
}

test("a long report reaches the parent as a 512-byte preview; a failure as its code only", async () => {
  const seen: ProviderRequest[] = [];
  const longReport = "é".repeat(3000); // 6000 bytes of UTF-8
  const f = await family(
    [
      { toolCalls: [spawn("long", "write"), spawn("fails", "break")] },
      waitForSpawned,
      (request) => {
        seen.push(request);
        return { text: "done" };
      },
    ],
    [
      childAgent("long", () => ({ text: longReport })),
      childAgent(
        "fails",
        () => ({ error: { retry: "never", message: "secret raw failure text" } }),
      ),
    ],
    { parentEvents: true },
  );
  try {
    await f.threads.send({ threadId: f.threadId, requestKey: "s", input: { text: "go" } });
    await f.threads.waitForIdle(f.threadId, { timeoutMs: 10_000 });
    const messages = facts(seen[0]);
    assert.equal(messages.length, 2);
    for (const message of messages) {
      assert.ok(bytes(message) <= 8192);
      assert.doesNotMatch(message, /secret raw failure text/);
    }
    const completed = messages.find((m) => m.includes("] completed"))!;
    assert.ok(bytes(completed) < 1024, "the preview, not the whole report");
    assert.match(completed, /wait_agents|inspect_agent/);
    assert.match(messages.find((m) => m.includes("] failed"))!, /\(provider_error\)$/);

    const local = f.threads as LocalThreadService;
    const all = await local.listParentEvents(f.threadId);
    assert.equal(all.events.length, 2);
    assert.equal(all.cursor, undefined);
    const done = all.events.find((event) => event.kind === "completed")!;
    assert.ok(bytes(done.preview!) <= 512);
    assert.ok(longReport.startsWith(done.preview!.split("\n")[0].slice(0, 10)));
    const failed = all.events.find((event) => event.kind === "failed")!;
    assert.equal(failed.code, "provider_error");
    assert.equal(failed.preview, undefined);
    assert.ok(all.events[0].at <= all.events[1].at, "oldest first");

    // Pages of one, then the rest; the HTTP client reads the same pages.
    const first = await local.listParentEvents(f.threadId, { limit: 1 });
    assert.equal(first.events.length, 1);
    assert.ok(first.cursor);
    const second = await local.listParentEvents(f.threadId, { limit: 1, cursor: first.cursor });
    assert.deepEqual([...first.events, ...second.events], all.events);
    assert.equal(second.cursor, undefined);
    const remote = overHttp(f.threads);
    assert.deepEqual(await remote.listParentEvents(f.threadId, { limit: 1 }), first);
    assert.deepEqual(
      await remote.listParentEvents(f.threadId, { limit: 1, cursor: first.cursor }),
      second,
    );
  } finally {
    await f.host.shutdown();
  }
});

test("listParentEvents refuses bad options and unknown threads", async () => {
  const f = await family([], [childAgent("a")]);
  try {
    const local = f.threads as LocalThreadService;
    assert.deepEqual(await local.listParentEvents(f.threadId), { events: [] });
    const invalid = (error: unknown) =>
      error instanceof FloretError && error.code === "invalid_input";
    await assert.rejects(local.listParentEvents(f.threadId, { cursor: "nope" }), invalid);
    await assert.rejects(local.listParentEvents(f.threadId, { limit: 0 }), invalid);
    await assert.rejects(local.listParentEvents(f.threadId, { other: 1 } as never), invalid);
    await assert.rejects(
      local.listParentEvents("thread_missing"),
      (error: unknown) => error instanceof FloretError && error.code === "thread_not_found",
    );
  } finally {
    await f.host.shutdown();
  }
});
