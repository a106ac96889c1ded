/**
 * Store audit, sub-agents' children: a child is an ordinary thread whose
 * agent is the `subagents` entry recorded at spawn (DESIGN §10), also for
 * what is computed from the journal rather than run — its manual
 * compaction's budget — before and after a restart.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { memoryStore, type ProviderRequest, type ThreadService } from "@floret/engine";
import { idle, openAudit, type Play } from "./support/audit_store.ts";

/** The child thread a spawn in `threadId` started. */
async function onlyChild(threads: ThreadService, threadId: string): Promise<string> {
  const { threads: children } = await threads.list({ parentThreadId: threadId });
  assert.equal(children.length, 1);
  return children[0].threadId;
}

const spawned = (request: ProviderRequest): string[] =>
  request.messages.flatMap((m) =>
    m.role === "tool" && m.name === "spawn_agent" ? [JSON.parse(m.output).threadId as string] : []
  );

describe("store audit: a child's manual compaction uses the child's agent", () => {
  for (const restart of [false, true]) {
    test(
      `below the child's target it is a no-op, though above the parent's${
        restart ? ", after a restart" : ""
      }`,
      async () => {
        const store = memoryStore();
        const plays: Play[] = [];
        const a = await openAudit(store, plays);
        const { threadId } = await a.threads.create({ requestKey: "create" });
        // A task long enough to pass the parent's target (window 6000), far below the child's (128000).
        const task = `long task ${"words ".repeat(3000)}`;
        plays.push(
          { toolCalls: [{ name: "spawn_agent", arguments: { agent: "helper", task } }] },
          (request) => ({
            toolCalls: [{ name: "wait_agents", arguments: { threadIds: spawned(request) } }],
          }),
          { text: "spawned" },
        );
        await a.threads.send({ threadId, requestKey: "spawn", input: { text: "spawn" } });
        await idle(a.threads, threadId);
        const child = await onlyChild(a.threads, threadId);
        // A second turn on the child, so its first one is a head a compaction could summarise.
        await a.threads.send({ threadId: child, requestKey: "more", input: { text: "more" } });
        await idle(a.threads, child);
        const figures = await a.threads.context(child);
        assert.equal(figures.windowTokens, 128_000);
        assert.ok(figures.estimateTokens > 1.7 * 5400, `estimate ${figures.estimateTokens}`);
        let threads = a.threads;
        let b: Awaited<ReturnType<typeof openAudit>> | undefined;
        if (restart) {
          await a.host.shutdown();
          b = await openAudit(store, []);
          threads = b.threads;
        }
        const before = await threads.view(child);
        const result = await threads.compact({ threadId: child, requestKey: "compact child" });
        assert.equal(result.outcome, "noop");
        assert.match(
          (result as { compaction?: { reason?: string } }).compaction?.reason ?? "",
          /below the target/,
        );
        // A noop admits no turn and changes no item.
        assert.deepEqual(result.view.items, before.items);
        assert.deepEqual(result.view.turns, before.turns);
        const records = (await threads.context(child)).compactions;
        assert.deepEqual(records.map((r) => r.status), ["noop"]);
        assert.equal((await threads.context(child)).windowTokens, 128_000);
        await (b ?? a).host.shutdown();
      },
    );
  }
});
