// Audit (round 11): a thread that grows past 64 items and turns (the length
// from which views copy their lists on read) observed through events from its
// first turn, then through `view()` and `history()`. The observer's copy must
// equal the view; and a view or history page is the caller's own at every
// depth: editing a turn's usage, failure or retry origin, a tool's structured
// value or activity, or an interaction's questions and answers changes no
// later view, short thread or long.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import {
  defineAgent,
  defineTool,
  memoryStore,
  openHost,
  type ThreadItem,
  type ThreadView,
  type TurnSummary,
} from "@floret/engine";
import { scriptedGateway, type ScriptStep } from "@floret/engine/testing";
import { threadApi } from "@floret/engine/http";
import { Observer, plain, stateOf } from "./support/audit_observer.ts";

const LATER_TURNS = 62;

function script(): ScriptStep[] {
  const steps: ScriptStep[] = [
    { toolCalls: [{ name: "info", arguments: {} }] },
    { toolCalls: [{ name: "ask_user", arguments: { questions: [{ id: "q", prompt: "Size?" }] } }] },
    { text: "first done", usage: { inputTokens: 10, outputTokens: 3 } },
    { error: { retry: "never", message: "provider says no" } },
    { text: "retried", usage: { inputTokens: 11, outputTokens: 4 } },
  ];
  for (let i = 0; i < LATER_TURNS; i++) {
    steps.push({ text: `answer ${i}`, usage: { inputTokens: 20 + i, outputTokens: 5 } });
  }
  return steps;
}

/** Edits every nested part of a view a host could reach. */
function editDeeply(items: ThreadItem[], turns: TurnSummary[]): number {
  let edits = 0;
  for (const turn of turns) {
    if (turn.usage) (turn.usage.outputTokens = -1, edits++);
    if (turn.failure) (turn.failure.message = "edited", edits++);
    if (turn.retryOf) (turn.retryOf.turnId = "edited", edits++);
  }
  for (const item of items) {
    const structured = item.tool?.structured as { when?: Date; tags?: Set<string> } | undefined;
    if (structured?.when) (structured.when.setTime(5), structured.tags!.add("edited"), edits++);
    const activity = item.tool?.activity;
    if (activity) (activity.label = "edited", activity.rows![0]!.text = "edited", edits++);
    const interaction = item.interaction;
    if (interaction?.questions) (interaction.questions[0]!.prompt = "edited", edits++);
    if (interaction?.resolution?.answers) {
      interaction.resolution.answers[0]!.value = "edited";
      edits++;
    }
  }
  return edits;
}

describe("a long thread observed through events, then through views", () => {
  test("the observer's copy equals view(); views and history pages are the caller's own at every depth", async () => {
    const info = defineTool({
      name: "info",
      description: "Structured facts",
      input: z.object({}),
      execute: () => ({
        output: "facts",
        structured: { when: new Date(0), tags: new Set(["a"]) },
        activity: { label: "info", rows: [{ kind: "text" as const, text: "row" }] },
      }),
    });
    const host = await openHost({ store: memoryStore() });
    const threads = host.threads({
      agent: defineAgent({
        id: "long",
        systemPrompt: "Long.",
        gateway: scriptedGateway(script()),
        tools: [info],
        providerRetry: { disabled: true },
      }),
    });
    const { threadId } = await threads.create({ requestKey: "create" });
    const observer = await Observer.join(threads, threadId);
    const settle = async (): Promise<ThreadView> => {
      const view = await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
      await observer.reach(view);
      return view;
    };

    await threads.send({ threadId, requestKey: "s0", input: { text: "turn 0" } });
    const asking = await settle();
    await threads.respond({
      threadId,
      requestKey: "answer",
      interactionId: asking.pending[0]!.id,
      answers: [{ questionId: "q", value: "large" }],
    });
    await settle();
    await threads.send({ threadId, requestKey: "s1", input: { text: "turn 1" } });
    const failed = await settle();
    assert.equal(failed.turns.at(-1)?.failure?.code, "provider_error");
    await threads.retry({ threadId, requestKey: "retry" });
    const short = await settle();
    assert.ok(short.items.length < 64 && short.turns.length < 64);

    // A short view, edited deeply, then read again.
    const shortBefore = plain(short);
    assert.equal(editDeeply(short.items, short.turns), 8);
    assert.deepEqual(plain(await threads.view(threadId)), shortBefore, "short view edited deeply");

    for (let i = 0; i < LATER_TURNS; i++) {
      await threads.send({ threadId, requestKey: `later-${i}`, input: { text: `later ${i}` } });
      await settle();
    }
    const long = await threads.view(threadId);
    assert.ok(long.items.length >= 64 && long.turns.length >= 64, "past the copy-on-read length");
    assert.deepEqual(observer.problems, []);
    assert.equal(observer.resyncs, 0);
    assert.deepEqual(stateOf(observer.local), stateOf(long), "observer's copy equals view()");

    // The same long view over HTTP: the view route and the events stream's first event.
    const app = threadApi(threads, { authorize: () => true });
    const overHttp = await (await app.fetch(new Request(`http://127.0.0.1/threads/${threadId}`)))
      .json() as ThreadView;
    // (The wire carries a Set as its members, which plain JSON here would not: compare the rest.)
    const wire = (view: ThreadView) => {
      const state = stateOf(view);
      for (const item of state.items) delete item.tool?.structured;
      return state;
    };
    assert.deepEqual(wire(overHttp), wire(long), "GET /threads/:id");
    const events = await app.fetch(new Request(`http://127.0.0.1/threads/${threadId}/events`));
    const reader = events.body!.getReader();
    let head = "";
    while (!head.includes("\n\n")) head += new TextDecoder().decode((await reader.read()).value);
    await reader.cancel();
    const [, data] = /^event: view\ndata: (.*)$/m.exec(head)!;
    assert.deepEqual(wire(JSON.parse(data!) as ThreadView), wire(long), "the events' view");

    const longBefore = plain(long);
    assert.equal(editDeeply(long.items, long.turns), 8 + LATER_TURNS);
    assert.deepEqual(plain(await threads.view(threadId)), longBefore, "long view edited deeply");

    const page = await threads.history(threadId, { limit: 500 });
    assert.equal(page.hasMore, false);
    assert.deepEqual(
      plain(page.items),
      longBefore.items,
      "one page of history is the view's items",
    );
    const pageBefore = plain(page);
    assert.equal(editDeeply(page.items, []), 4);
    assert.deepEqual(plain(await threads.history(threadId, { limit: 500 })), pageBefore);
    assert.deepEqual(plain(await threads.view(threadId)), longBefore, "after a history page edit");

    await observer.leave();
    await host.shutdown();
  });
});
