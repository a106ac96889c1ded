// Audit: after every kind of command has shaped a thread (tools with
// structured results and activity, an approval approved and one denied, an
// answered question, a steer, an immediate cancel, a retry, a fork of it), a
// new host over the same store shows exactly the live view, and history pages
// read from the journal alone (the thread not loaded) add up to the live
// items. Memory store and libSQL file.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import { defineTool, type ThreadItem } from "@floret/engine";
import { scriptedGateway } from "@floret/engine/testing";
import { BACKENDS, durable, openAudit } from "./support/audit_commands.ts";
import { askCity, writeCalls, writeTool } from "./support/interactions.ts";

const WAIT = { timeoutMs: 10_000 };

const report = defineTool({
  name: "report",
  description: "Report",
  input: z.object({ topic: z.string() }),
  execute: ({ topic }) => ({
    output: `report on ${topic}`,
    structured: { topic, at: new Date(0), n: 10n },
    activity: { label: "Reporting", rows: [{ kind: "code" as const, text: "x = 1" }] },
  }),
});

/** Every page of a thread's history, oldest first, `limit` items at a time. */
async function allPages(
  history: (options: { limit: number; before?: string }) => Promise<{
    items: ThreadItem[];
    before?: string;
    hasMore: boolean;
  }>,
  limit: number,
): Promise<ThreadItem[]> {
  const pages: ThreadItem[][] = [];
  let before: string | undefined;
  for (;;) {
    const page = await history(before === undefined ? { limit } : { limit, before });
    pages.unshift(page.items);
    if (!page.hasMore) break;
    assert.ok(page.before, "a page with more before it has a cursor");
    before = page.before;
  }
  return pages.flat();
}

for (const { name, make } of BACKENDS) {
  describe(`cold pages and reloads after every command (${name})`, () => {
    test("history read from the journal alone equals the live items; reload equals the live view", {
      timeout: 60_000,
    }, async () => {
      const backend = make();
      const ran: string[] = [];
      const gateway = scriptedGateway([
        { toolCalls: [{ name: "report", arguments: { topic: "a" } }] },
        { text: "reported", reasoning: "thinking it over" },
        writeCalls("yes", "no"),
        { text: "half done" },
        askCity,
        { text: "Oslo it is" },
        { hang: true },
        { text: "after steer", delayMs: 5 },
        { hang: true },
        { text: "regenerated" },
      ]);
      try {
        let { host, threads } = await openAudit(backend, gateway, [report, writeTool(ran)]);
        const { threadId: id } = await threads.create({ requestKey: "c", title: "Rich" });
        const step = async (key: string, text: string) => {
          await threads.send({ threadId: id, requestKey: key, input: { text } });
          return await threads.waitForIdle(id, WAIT);
        };
        await step("s1", "report please");
        let view = await step("s2", "write two");
        const [approval, denial] = view.pending;
        await threads.respond({
          threadId: id,
          requestKey: "r1",
          interactionId: approval.id,
          decision: "approve",
        });
        await threads.respond({
          threadId: id,
          requestKey: "r2",
          interactionId: denial.id,
          decision: "deny",
        });
        await threads.waitForIdle(id, WAIT);
        view = await step("s3", "ask me");
        await threads.respond({
          threadId: id,
          requestKey: "r3",
          interactionId: view.pending[0].id,
          answers: [{ questionId: "city", value: "Oslo" }],
        });
        await threads.waitForIdle(id, WAIT);
        await threads.send({ threadId: id, requestKey: "s4", input: { text: "steer me" } });
        await threads.steer({ threadId: id, requestKey: "st", text: "this way" });
        await threads.waitForIdle(id, WAIT);
        await threads.send({ threadId: id, requestKey: "s5", input: { text: "to cancel" } });
        await threads.cancel({ threadId: id, requestKey: "x" });
        await threads.retry({ threadId: id, requestKey: "rt" });
        await threads.waitForIdle(id, WAIT);
        await threads.setTitle({ threadId: id, requestKey: "t", title: "Renamed" });
        const cut = (await threads.view(id)).items.find((i) => i.text === "Oslo it is")!.id;
        const { threadId: forkId } = await threads.fork({
          threadId: id,
          requestKey: "f",
          atItemId: cut,
        });

        const live = await threads.view(id);
        const liveFork = await threads.view(forkId);
        assert.deepEqual(ran, ["yes"]);
        assert.deepEqual(live.turns.map((t) => t.outcome), [
          "completed",
          "completed",
          "completed",
          "completed",
          "cancelled",
          "completed",
        ]);
        const warmPages = await allPages((o) => threads.history(id, o), 3);
        assert.deepEqual(warmPages, live.items);
        await host.shutdown();

        ({ host, threads } = await openAudit(backend, gateway, [report, writeTool(ran)]));
        // Pages first, while neither thread is loaded.
        assert.deepEqual(await allPages((o) => threads.history(id, o), 3), live.items);
        assert.deepEqual(await allPages((o) => threads.history(forkId, o), 2), liveFork.items);
        assert.deepEqual(await allPages((o) => threads.history(id, o), 500), live.items);
        assert.deepEqual(durable(await threads.view(id)), durable(live));
        assert.deepEqual(durable(await threads.view(forkId)), durable(liveFork));
        const tool = (await threads.view(id)).items.find((i) => i.tool?.name === "report")!.tool!;
        assert.deepEqual(tool.structured, { topic: "a", at: new Date(0), n: 10n });
        await host.shutdown();
      } finally {
        backend.dispose();
      }
    });
  });
}
