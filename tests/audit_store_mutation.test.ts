/**
 * Store audit: what the engine shows and stores does not change when the host
 * changes objects it got back (views, history pages, context figures, thread
 * lists) or objects it handed in (tool results, gateway usage and state), on
 * a memory store (whose entries are encoded lazily) and on a libSQL file.
 * After the edits, a new host on the same store shows exactly the live view.
 */
import { after, describe, test } from "node:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import assert from "node:assert/strict";
import { z } from "zod";
import {
  defineAgent,
  defineTool,
  type Gateway,
  isFloretError,
  type KvStore,
  memoryStore,
  openHost,
  type ProviderEvent,
  type ThreadService,
} from "@floret/engine";
import { libsqlStore } from "@floret/engine/libsql";
import { scriptedGateway, type ScriptStep } from "@floret/engine/testing";
import {
  durableView,
  idle,
  keepOpen,
  openAudit,
  round,
  sameAt,
  scribble,
  storedRows,
} from "./support/audit_store.ts";

const dir = mkdtempSync(join(tmpdir(), "floret-audit-store-mutation-"));
after(() => rmSync(dir, { recursive: true, force: true }));

let files = 0;
const STORES: { name: string; open(): KvStore }[] = [
  { name: "memory", open: () => memoryStore() },
  { name: "libSQL file", open: () => libsqlStore({ url: `file:${join(dir, `m${++files}.db`)}` }) },
];

/** Everything a host can read about one thread, as deep copies. */
async function readAll(threads: ThreadService, threadId: string) {
  const view = durableView(await threads.view(threadId));
  const pages = [];
  for (const limit of [1, 5, 500]) {
    let before: string | undefined;
    for (;;) {
      const page = await threads.history(threadId, { limit, before });
      pages.push(structuredClone(page));
      if (!page.hasMore) break;
      before = page.before;
    }
  }
  const context = structuredClone(await threads.context(threadId));
  const list = structuredClone(await threads.list({ limit: 100 }));
  return { view, pages, context, list };
}

for (const backend of STORES) {
  describe(`store audit, host edits, on ${backend.name}`, () => {
    test("scribbling over every returned view, page, context and list changes nothing shown or stored", async () => {
      const store = backend.open();
      try {
        const plays: ScriptStep[] = [];
        const a = await openAudit(store, plays);
        const { threadId } = await a.threads.create({ requestKey: "create" });
        for (const r of ["r1", "r2", "r3"]) await round(a, plays, threadId, r);
        const mid = (await a.threads.view(threadId)).items[20];
        const fork = await a.threads.fork({ threadId, requestKey: "fork", atItemId: mid.id });
        const live = await idle(a.threads, threadId);
        assert.ok(live.items.length >= 64, `${live.items.length} items`);
        const before = await readAll(a.threads, threadId);
        const forkBefore = await readAll(a.threads, fork.threadId);
        // The store is not read before the edits: a memory store makes an entry's text when it is
        // first read, so edits reaching an entry would show in what a restarted host reads.

        // Edit everything the host got back, through every query and command result.
        scribble(live);
        scribble(fork.view);
        scribble(await a.threads.view(threadId));
        for (const limit of [1, 7, 500]) scribble(await a.threads.history(threadId, { limit }));
        scribble(await a.threads.context(threadId));
        scribble(await a.threads.list());
        // Replays return views too.
        scribble(await a.threads.fork({ threadId, requestKey: "fork", atItemId: mid.id }));
        scribble(await a.threads.view(fork.threadId));

        // A new host reads the same store and shows what the live host showed.
        const b = await openAudit(store, []);
        sameAt(await readAll(b.threads, threadId), before, "restarted");
        sameAt(await readAll(b.threads, fork.threadId), forkBefore, "restarted fork");
        sameAt(await readAll(a.threads, threadId), before, "live after edits");
        sameAt(await readAll(a.threads, fork.threadId), forkBefore, "live fork after edits");
        const rows = await storedRows(store);
        await a.host.shutdown();
        await b.host.shutdown();
        sameAt(await storedRows(store), rows, "stored rows after both hosts stopped");
      } finally {
        await store.close();
      }
    });

    test("scribbling over pending questions and approvals changes nothing shown or stored", async () => {
      const store = backend.open();
      try {
        const plays: ScriptStep[] = [];
        const a = await openAudit(store, plays);
        const { threadId } = await a.threads.create({ requestKey: "create" });
        plays.push({
          toolCalls: [{
            name: "ask_user",
            arguments: {
              questions: [{ id: "q", prompt: "Which?", options: ["x", "y"] }, {
                id: "s",
                prompt: "Secret?",
                secret: true,
              }],
            },
          }],
        });
        const sent = await a.threads.send({ threadId, requestKey: "ask", input: { text: "ask" } });
        const waiting = await idle(a.threads, threadId);
        assert.equal(waiting.pending.length, 1);
        const interactionId = waiting.pending[0].id;
        const before = await readAll(a.threads, threadId);
        scribble(sent);
        scribble(waiting);
        scribble(await a.threads.view(threadId));
        scribble(await a.threads.history(threadId, { limit: 5 }));
        const b = await openAudit(store, []);
        sameAt(await readAll(b.threads, threadId), before, "restarted");
        sameAt(await readAll(a.threads, threadId), before, "live after edits");
        // The answer is checked against the options as asked, not as a host edited them.
        await assert.rejects(
          a.threads.respond({
            threadId,
            requestKey: "answer scribbled",
            interactionId,
            answers: [{ questionId: "q", value: "scribbled x" }, { questionId: "s", value: "1" }],
          }),
          (error: unknown) => isFloretError(error) && error.code === "invalid_input",
        );
        plays.push({ text: "thanks" });
        await a.threads.respond({
          threadId,
          requestKey: "answer",
          interactionId,
          answers: [{ questionId: "q", value: "x" }, { questionId: "s", value: "1" }],
        });
        await idle(a.threads, threadId);
        await a.host.shutdown();
        await b.host.shutdown();
      } finally {
        await store.close();
      }
    });

    test("command inputs the host changes after the command returned change nothing", async () => {
      const store = backend.open();
      try {
        const PNG =
          "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";
        const gateway = () =>
          scriptedGateway([
            { text: "seen", usage: { inputTokens: 10, outputTokens: 2 } },
            {
              toolCalls: [{
                name: "ask_user",
                arguments: { questions: [{ id: "q", prompt: "Which?", options: ["x", "y"] }] },
              }],
            },
            { text: "answered" },
            { text: "queued one" },
          ], { capabilities: { images: true } });
        const agent = (g: ReturnType<typeof gateway>) =>
          defineAgent({ id: "inputs", systemPrompt: "Inputs.", gateway: g });
        const host = await openHost({ store: keepOpen(store) });
        const threads = host.threads({ agent: agent(gateway()) });
        const inputs: object[] = [];
        const keep = <T extends object>(input: T): T => (inputs.push(input), input);
        const { threadId } = await threads.create(keep({ requestKey: "create", title: "Inputs" }));
        await threads.send(keep({
          threadId,
          requestKey: "image",
          input: {
            text: "look",
            attachments: [{ type: "image", mediaType: "image/png", dataBase64: PNG, name: "dot" }],
          },
          supplementalContext: [{ title: "Now", text: "supplemental" }],
        }));
        await idle(threads, threadId);
        await threads.send(keep({ threadId, requestKey: "ask", input: { text: "ask me" } }));
        const waiting = await idle(threads, threadId);
        // Queued behind the waiting turn, with an image.
        await threads.send(keep({
          threadId,
          requestKey: "queued",
          input: {
            text: "later",
            attachments: [{ type: "image", mediaType: "image/png", dataBase64: PNG }],
          },
        }));
        await threads.respond(keep({
          threadId,
          requestKey: "answer",
          interactionId: waiting.pending[0].id,
          answers: [{ questionId: "q", value: "x" }],
        }));
        await idle(threads, threadId);
        await threads.setTitle(keep({ threadId, requestKey: "title", title: "Renamed" }));
        const fork = await threads.fork(keep({ threadId, requestKey: "fork" }));
        const before = await readAll(threads, threadId);
        const forkBefore = await readAll(threads, fork.threadId);
        assert.deepEqual(
          (before.view.items as { kind: string; text?: string }[]).map((i) => [i.kind, i.text]),
          [
            ["user", "look"],
            ["assistant", "seen"],
            ["user", "ask me"],
            ["interaction", undefined],
            ["assistant", "answered"],
            ["user", "later"],
            ["assistant", "queued one"],
          ],
        );
        for (const input of inputs) scribble(input);
        const again = await openHost({ store: keepOpen(store) });
        const restarted = again.threads({ agent: agent(gateway()) });
        sameAt(await readAll(restarted, threadId), before, "restarted");
        sameAt(await readAll(restarted, fork.threadId), forkBefore, "restarted fork");
        sameAt(await readAll(threads, threadId), before, "live after edits");
        // Replays answer from what was committed, not from the edited inputs.
        const replay = await threads.setTitle({ threadId, requestKey: "title", title: "Renamed" });
        assert.equal(replay.view.title, "Renamed");
        await host.shutdown();
        await again.shutdown();
      } finally {
        await store.close();
      }
    });

    test("objects a tool returned or a gateway yielded, changed afterwards, change nothing", async () => {
      const store = backend.open();
      try {
        // Handed in and kept by host code, which changes them after the engine took them.
        const kept: object[] = [];
        const tool = defineTool({
          name: "report",
          description: "A structured report",
          input: z.object({ n: z.number() }),
          execute: ({ n }) => {
            const result = {
              output: `report ${n}`,
              structured: { n, list: [n, { deep: "x" }], when: new Date(1000 * n) },
              activity: { label: `report ${n}`, rows: [{ kind: "text" as const, text: "row" }] },
            };
            kept.push(result);
            return result;
          },
        });
        let calls = 0;
        // The messages of each request (assistant messages carry the opaque state).
        const requests: unknown[][] = [];
        const gateway: Gateway = {
          info: { provider: "hand", model: "m", stateKey: "hand:m", capabilities: {} },
          async *stream(request): AsyncIterable<ProviderEvent> {
            requests.push(structuredClone(request.messages));
            calls++;
            const usage = { inputTokens: 100 * calls, outputTokens: 10 * calls };
            const state = { opaque: { step: calls, list: [calls] } };
            kept.push(usage, state);
            if (calls % 2 === 1) {
              yield { type: "tool-call-start", callId: `c${calls}`, name: "report" };
              yield {
                type: "tool-call-delta",
                callId: `c${calls}`,
                argumentsDelta: JSON.stringify({ n: calls }),
              };
              yield { type: "tool-call-end", callId: `c${calls}` };
              yield { type: "usage", usage };
              yield { type: "finish", reason: "tool_calls", state };
            } else {
              yield { type: "text", delta: `answer ${calls}` };
              yield { type: "usage", usage };
              yield { type: "finish", reason: "stop", state };
            }
          },
        };
        const agent = () =>
          defineAgent({ id: "kept", systemPrompt: "Keep.", gateway, tools: [tool] });
        const host = await openHost({ store: keepOpen(store) });
        const threads = host.threads({ agent: agent() });
        const { threadId } = await threads.create({ requestKey: "create" });
        for (let turn = 0; turn < 3; turn++) {
          await threads.send({ threadId, requestKey: `s${turn}`, input: { text: `go ${turn}` } });
          await idle(threads, threadId);
        }
        const before = await readAll(threads, threadId);
        const tools = (before.view.items as { tool?: { structured?: unknown } }[])
          .filter((item) => item.tool);
        assert.deepEqual(
          tools.map((item) => item.tool!.structured),
          [1, 3, 5].map((n) => ({
            n,
            list: [n, { deep: "x" }],
            when: new Date(1000 * n),
          })),
        );
        for (const object of kept) scribble(object);
        const again = await openHost({ store: keepOpen(store) });
        const restarted = again.threads({ agent: agent() });
        sameAt(await readAll(restarted, threadId), before, "restarted");
        sameAt(await readAll(threads, threadId), before, "live after edits");
        // The next request carries the state the last response gave, as it was given: live
        // (on a fork at the end, whose path is the same) and after the restart.
        const fork = await threads.fork({ threadId, requestKey: "fork" });
        requests.length = 0;
        await threads.send({ threadId: fork.threadId, requestKey: "next", input: { text: "n" } });
        await idle(threads, fork.threadId);
        await host.shutdown();
        await restarted.send({ threadId, requestKey: "next", input: { text: "n" } });
        await idle(restarted, threadId);
        // Six responses so far, each with its state as the gateway gave it.
        const stateOf = (messages: unknown[]) =>
          messages.flatMap((m) =>
            "state" in (m as object) ? [(m as { state: unknown }).state] : []
          );
        assert.deepEqual(
          stateOf(requests[0]),
          [1, 2, 3, 4, 5, 6].map((step) => ({ opaque: { step, list: [step] } })),
        );
        assert.equal(requests.length, 4);
        sameAt(requests[2], requests[0], "the next request after a restart");
        await again.shutdown();
      } finally {
        await store.close();
      }
    });
  });
}
