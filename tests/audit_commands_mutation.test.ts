// Audit of ownership across the public API: whatever the host passes in
// (command inputs and options) or gets back (views, results, history pages,
// lists, context figures), and whatever host code keeps after handing it over
// (a tool's result, a gateway's request), it may change afterwards without
// changing anything the engine stores or shows later. The memory store makes
// an entry's JSON text only at its first read, so a shared object would show
// the host's later change in the stored bytes: each check reads the thread
// again on a new host over the same store. Memory store and libSQL file.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import { defineTool, type ThreadView } from "@floret/engine";
import { scriptedGateway, type ScriptStep } from "@floret/engine/testing";
import { BACKENDS, openAudit } from "./support/audit_commands.ts";
import { askCity, writeCalls, writeTool } from "./support/interactions.ts";

const WAIT = { timeoutMs: 10_000 };
const PIXEL = "iVBORw0KGgo=";

/** Changes every reachable field, element and entry of `value`, wherever the runtime lets it. */
function vandalize(value: unknown, seen = new Set<unknown>()): void {
  if (typeof value !== "object" || value === null || seen.has(value)) return;
  seen.add(value);
  const attempt = (change: () => void): void => {
    try {
      change();
    } catch {
      // A frozen object or an accessor without a setter refuses: that is allowed.
    }
  };
  if (value instanceof Date) return attempt(() => value.setTime(1));
  if (value instanceof Map) {
    for (const entry of value.values()) vandalize(entry, seen);
    return attempt(() => value.set("junk", "junk"));
  }
  if (value instanceof Set) {
    for (const entry of value) vandalize(entry, seen);
    return attempt(() => value.add("junk"));
  }
  const record = value as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    const field = record[key];
    vandalize(field, seen);
    if (typeof field === "string") attempt(() => (record[key] = `${field}!`));
    else if (typeof field === "number") attempt(() => (record[key] = field + 1000));
    else if (typeof field === "boolean") attempt(() => (record[key] = !field));
  }
  if (Array.isArray(value)) attempt(() => value.push("junk"));
  else attempt(() => (record.junk = "junk"));
}

/** What a view shows, as a value of its own (structured values keep their types). */
function shown(view: ThreadView): unknown {
  const { viewVersion: _v, runProgress: _p, ...rest } = view as ThreadView & {
    runProgress?: unknown;
  };
  return structuredClone(rest);
}

for (const { name, make } of BACKENDS) {
  describe(`the host changes what it passed in or got back (${name})`, () => {
    test("views, results, pages, lists and context figures are the caller's own", {
      timeout: 120_000,
    }, async () => {
      const backend = make();
      const kept: { structured?: Record<string, unknown>; activity?: Record<string, unknown> } = {};
      const report = defineTool({
        name: "report",
        description: "Report",
        input: z.object({ topic: z.string() }),
        execute: ({ topic }) => {
          const structured = {
            topic,
            nested: { list: [1, 2, { deep: "yes" }] },
            when: new Date(86_400_000),
            tags: new Set(["a"]),
          };
          const activity = { label: "Reporting", rows: [{ kind: "text" as const, text: "row" }] };
          kept.structured = structured;
          kept.activity = activity;
          return { output: `report on ${topic}`, structured, activity };
        },
      });
      // 34 plain turns make the items list long enough (≥ 64) to be copied on read.
      const plain: ScriptStep[] = Array.from({ length: 34 }, (_, i) => ({ text: `answer ${i}` }));
      const gateway = scriptedGateway([
        ...plain,
        { toolCalls: [{ name: "report", arguments: { topic: "cats" } }] },
        {
          toolCalls: [{
            name: "todo_write",
            arguments: { todos: [{ id: "t1", text: "feed", status: "pending" }] },
          }],
        },
        { text: "reported" },
        askCity,
        { text: "noted" },
        writeCalls("w"),
        { hang: true },
      ]);
      const ran: string[] = [];
      try {
        let { host, threads } = await openAudit(backend, gateway, [report, writeTool(ran)]);
        const created = await threads.create({ requestKey: "c", title: "Ownership" });
        const id = created.threadId;
        vandalize(created);
        for (let i = 0; i < 34; i++) {
          const sent = await threads.send({
            threadId: id,
            requestKey: `s${i}`,
            input: { text: `q${i}` },
          });
          vandalize(sent);
          vandalize(await threads.waitForIdle(id, WAIT));
        }
        await threads.send({ threadId: id, requestKey: "r", input: { text: "report" } });
        await threads.waitForIdle(id, WAIT);
        // The tool keeps its result and changes it after handing it over.
        vandalize(kept.structured);
        vandalize(kept.activity);
        await threads.send({ threadId: id, requestKey: "ask", input: { text: "ask me" } });
        const asking = await threads.waitForIdle(id, WAIT);
        const answers = [{ questionId: "city", value: "Oslo" }];
        const responded = await threads.respond({
          threadId: id,
          requestKey: "answer",
          interactionId: asking.pending[0].id,
          answers,
        });
        vandalize(answers);
        vandalize(responded);
        await threads.waitForIdle(id, WAIT);
        await threads.send({ threadId: id, requestKey: "w", input: { text: "write" } });
        vandalize(await threads.waitForIdle(id, WAIT)); // waiting for approval
        const queued = await threads.send({
          threadId: id,
          requestKey: "q",
          input: { text: "later" },
        });
        assert.equal(queued.queued, true);
        vandalize(queued);

        const reference = await threads.view(id);
        const expected = shown(reference);
        const items = reference.items;
        assert.ok(items.length >= 64, `${items.length} items`);
        const tool = items.find((item) => item.tool?.name === "report")!.tool!;
        assert.deepEqual(tool.structured, {
          topic: "cats",
          nested: { list: [1, 2, { deep: "yes" }] },
          when: new Date(86_400_000),
          tags: new Set(["a"]),
        });
        assert.deepEqual(tool.activity, {
          label: "Reporting",
          rows: [{ kind: "text", text: "row" }],
        });
        assert.deepEqual(reference.todos, [{ id: "t1", text: "feed", status: "pending" }]);
        assert.equal(reference.pending.length, 1);
        assert.deepEqual(reference.queue.map((q) => q.text), ["later"]);
        const asked = items.find((item) => item.kind === "interaction")!;
        assert.deepEqual(asked.interaction?.questions?.[0].options, ["Oslo", "Rome"]);

        const page = await threads.history(id, { limit: 100 });
        const expectedPage = structuredClone(page);
        const listed = await threads.list();
        const expectedList = structuredClone(listed);
        const figures = await threads.context(id);
        const expectedFigures = structuredClone(figures);

        vandalize(reference);
        vandalize(page);
        vandalize(listed);
        vandalize(figures);

        const again = await threads.view(id);
        assert.deepEqual(shown(again), expected, "a changed view changes no later view");
        assert.deepEqual(structuredClone(await threads.history(id, { limit: 100 })), expectedPage);
        assert.deepEqual(structuredClone(await threads.list()), expectedList);
        assert.deepEqual(structuredClone(await threads.context(id)), expectedFigures);

        await threads.cancel({ threadId: id, requestKey: "stop" });
        const stopped = shown(await threads.waitForIdle(id, WAIT));
        await host.shutdown();

        ({ host, threads } = await openAudit(backend, gateway, [report, writeTool(ran)]));
        const reloaded = await threads.view(id);
        assert.deepEqual(shown(reloaded), stopped, "a new host shows what the live view showed");
        assert.deepEqual(
          reloaded.items.find((item) => item.tool?.name === "report")?.tool?.structured,
          tool.structured === undefined ? undefined : {
            topic: "cats",
            nested: { list: [1, 2, { deep: "yes" }] },
            when: new Date(86_400_000),
            tags: new Set(["a"]),
          },
        );
        // The last request (the "write" turn's) was built long after the answers were changed.
        const answerMessage = gateway.requests.at(-1)?.messages.filter((m) => m.role === "user")
          .map((m) => (m as { text: string }).text);
        assert.ok(
          answerMessage?.some((text) => text.includes("Oslo") && !text.includes("Oslo!")),
          JSON.stringify(answerMessage),
        );
        await host.shutdown();
      } finally {
        backend.dispose();
      }
    });

    test("a subscriber that edits the updates it receives changes no view", {
      timeout: 60_000,
    }, async () => {
      const backend = make();
      const report = defineTool({
        name: "report",
        description: "Report",
        input: z.object({ topic: z.string() }),
        execute: ({ topic }) => ({
          output: `report on ${topic}`,
          structured: { topic, list: [1, 2] },
          activity: { label: "Reporting", rows: [{ kind: "text" as const, text: "row" }] },
        }),
      });
      const gateway = scriptedGateway([
        { toolCalls: [{ name: "report", arguments: { topic: "a" } }] },
        {
          toolCalls: [{
            name: "todo_write",
            arguments: { todos: [{ id: "t1", text: "feed", status: "pending" }] },
          }],
        },
        { text: "done", reasoning: "thinking" },
        askCity,
        { text: "Oslo then" },
        writeCalls("w"),
        { text: "written" },
      ]);
      const ran: string[] = [];
      try {
        let { host, threads } = await openAudit(backend, gateway, [report, writeTool(ran)]);
        const { threadId: id } = await threads.create({ requestKey: "c" });
        const controller = new AbortController();
        let batches = 0;
        const vandal = (async () => {
          for await (const update of threads.subscribe(id, { signal: controller.signal })) {
            if (update.type === "batch") batches++;
            vandalize(update);
          }
        })();
        await threads.send({ threadId: id, requestKey: "s1", input: { text: "report" } });
        await threads.waitForIdle(id, WAIT);
        await threads.send({ threadId: id, requestKey: "s2", input: { text: "ask" } });
        let view = await threads.waitForIdle(id, WAIT);
        await threads.respond({
          threadId: id,
          requestKey: "r1",
          interactionId: view.pending[0].id,
          answers: [{ questionId: "city", value: "Oslo" }],
        });
        await threads.waitForIdle(id, WAIT);
        await threads.send({ threadId: id, requestKey: "s3", input: { text: "write" } });
        view = await threads.waitForIdle(id, WAIT);
        await threads.respond({
          threadId: id,
          requestKey: "r2",
          interactionId: view.pending[0].id,
          decision: "approve",
        });
        await threads.waitForIdle(id, WAIT);
        // Let the last batch reach the subscriber before it stops.
        await new Promise((resolve) => setTimeout(resolve, 50));
        controller.abort();
        await vandal;
        assert.ok(batches > 5, `${batches} batches`);
        const live = await threads.view(id);
        assert.deepEqual(live.todos, [{ id: "t1", text: "feed", status: "pending" }]);
        assert.deepEqual(
          live.items.find((i) => i.tool?.name === "report")?.tool?.structured,
          { topic: "a", list: [1, 2] },
        );
        assert.deepEqual(live.turns.map((t) => t.outcome), ["completed", "completed", "completed"]);
        await host.shutdown();
        ({ host, threads } = await openAudit(backend, gateway, [report, writeTool(ran)]));
        assert.deepEqual(shown(await threads.view(id)), shown(live));
        await host.shutdown();
      } finally {
        backend.dispose();
      }
    });

    test("inputs changed after the call: requests, view and store keep the originals", {
      timeout: 60_000,
    }, async () => {
      const backend = make();
      const gateway = scriptedGateway([
        writeCalls("one"),
        { text: "first done" },
        { text: "second done" },
        { text: "regenerated" },
      ], { capabilities: { images: true } } as never);
      const inner = gateway;
      const ran: string[] = [];
      try {
        let { host, threads } = await openAudit(backend, gateway, [writeTool(ran, "allow")]);
        const { threadId: id } = await threads.create({ requestKey: "c" });
        const input = {
          text: "look",
          attachments: [{
            type: "image" as const,
            mediaType: "image/png" as const,
            dataBase64: PIXEL,
          }],
        };
        const supplementalContext = [{ title: "Notes", text: "keep this" }];
        const command = { threadId: id, requestKey: "s", input, supplementalContext };
        await threads.send(command);
        vandalize(command);
        await threads.waitForIdle(id, WAIT);
        await threads.send({ threadId: id, requestKey: "s2", input: { text: "again" } });
        const view = await threads.waitForIdle(id, WAIT);
        assert.deepEqual(ran, ["one"]);
        assert.deepEqual(view.items.map((i) => [i.kind, i.text]), [
          ["user", "look"],
          ["tool", undefined],
          ["assistant", "first done"],
          ["user", "again"],
          ["assistant", "second done"],
        ]);
        const users = inner.requests.map((request) =>
          request.messages.filter((m) => m.role === "user") as {
            text: string;
            attachments?: { dataBase64: string }[];
          }[]
        );
        // Every request carries the original input; the supplemental context only in its turn.
        for (const [index, messages] of users.entries()) {
          assert.equal(messages[0].text, "look", `request ${index}`);
          assert.equal(messages[0].attachments?.[0].dataBase64, PIXEL, `request ${index}`);
        }
        assert.ok(
          users[1].some((m) => m.text.includes("keep this") && !m.text.includes("keep this!")),
        );
        assert.equal(users[2].at(-1)?.text, "again");
        assert.equal(inner.requests[1].messages[0].role, "system");
        assert.equal((inner.requests[2].messages[0] as { text: string }).text, "Audit.");
        const live = shown(view);
        await host.shutdown();

        ({ host, threads } = await openAudit(backend, gateway, [writeTool(ran, "allow")]));
        assert.deepEqual(shown(await threads.view(id)), live);
        await threads.retry({ threadId: id, requestKey: "again" });
        await threads.waitForIdle(id, WAIT).catch(() => undefined);
        const replayed = inner.requests.at(-1)!.messages.filter((m) => m.role === "user") as {
          text: string;
          attachments?: { dataBase64: string }[];
        }[];
        assert.equal(replayed[0].text, "look");
        assert.equal(replayed[0].attachments?.[0].dataBase64, PIXEL);
        await host.shutdown();
      } finally {
        backend.dispose();
      }
    });
  });
}
