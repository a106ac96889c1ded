/**
 * Rich questions (DESIGN §11): `header`, `placeholder`, `reason`, options with
 * a `description`, and `exhaustive` (default true with options; false accepts
 * free text), through `ask_user` and a tool's `inputRequired`.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import { defineTool, FloretError } from "@floret/engine";
import { engine } from "./support/engine.ts";

const isInvalid = (error: unknown) =>
  error instanceof FloretError && error.code === "invalid_input";

const rich = {
  questions: [
    {
      id: "db",
      prompt: "Which database?",
      header: "Storage",
      reason: "The schema depends on it",
      options: [{ value: "postgres", description: "Production default" }, "sqlite"],
    },
    {
      id: "name",
      prompt: "Project name?",
      placeholder: "my-project",
      options: ["alpha", "beta"],
      exhaustive: false,
    },
  ],
};

test("ask_user questions carry header, placeholder, reason and described options to the view", async () => {
  const e = await engine([{ toolCalls: [{ name: "ask_user", arguments: rich }] }, {
    text: "thanks",
  }]);
  try {
    await e.threads.send({ threadId: e.threadId, requestKey: "s", input: { text: "set up" } });
    const waiting = await e.threads.waitForIdle(e.threadId, { timeoutMs: 10_000 });
    assert.equal(waiting.status, "waiting");
    const pending = waiting.pending[0];
    assert.deepEqual(pending.questions, rich.questions);
    // Exhaustive by default with options: a value off the list is refused, nothing changes.
    await assert.rejects(
      e.threads.respond({
        threadId: e.threadId,
        requestKey: "r0",
        interactionId: pending.id,
        answers: [{ questionId: "db", value: "mysql" }, { questionId: "name", value: "x" }],
      }),
      isInvalid,
    );
    // exhaustive: false takes free text.
    await e.threads.respond({
      threadId: e.threadId,
      requestKey: "r1",
      interactionId: pending.id,
      answers: [{ questionId: "db", value: "postgres" }, {
        questionId: "name",
        value: "my own name",
      }],
    });
    const done = await e.threads.waitForIdle(e.threadId, { timeoutMs: 10_000 });
    assert.equal(done.turns.at(-1)?.outcome, "completed");
    const answered = e.gateway.requests[1].messages.findLast((m) => m.role === "user");
    assert.match(answered?.role === "user" ? answered.text : "", /my own name/);
  } finally {
    await e.host.shutdown();
  }
});

test("an ask_user question with a malformed option is an invalid call, not a question", async () => {
  const e = await engine([
    {
      toolCalls: [{
        name: "ask_user",
        arguments: { questions: [{ id: "q", prompt: "?", options: [{ label: "no value" }] }] },
      }],
    },
    { text: "ok" },
  ]);
  try {
    await e.threads.send({ threadId: e.threadId, requestKey: "s", input: { text: "go" } });
    const view = await e.threads.waitForIdle(e.threadId, { timeoutMs: 10_000 });
    assert.equal(view.pending.length, 0);
    assert.equal(view.status, "idle");
  } finally {
    await e.host.shutdown();
  }
});

test("a tool's inputRequired may ask rich questions too", async () => {
  const tool = defineTool({
    name: "deploy",
    description: "Deploy",
    input: z.object({}),
    execute: () => ({
      output: "needs a region",
      inputRequired: {
        questions: [{
          id: "region",
          prompt: "Region?",
          options: [{ value: "eu", description: "Frankfurt" }, { value: "us" }],
          exhaustive: true,
        }],
      },
    }),
  });
  const e = await engine(
    [{ toolCalls: [{ name: "deploy", arguments: {} }] }, { text: "deployed" }],
    {
      tools: [tool],
    },
  );
  try {
    await e.threads.send({ threadId: e.threadId, requestKey: "s", input: { text: "deploy" } });
    const waiting = await e.threads.waitForIdle(e.threadId, { timeoutMs: 10_000 });
    const question = waiting.pending[0]?.questions?.[0];
    assert.deepEqual(question?.options, [{ value: "eu", description: "Frankfurt" }, {
      value: "us",
    }]);
    await assert.rejects(
      e.threads.respond({
        threadId: e.threadId,
        requestKey: "r0",
        interactionId: waiting.pending[0].id,
        answers: [{ questionId: "region", value: "Frankfurt" }],
      }),
      isInvalid,
    );
    await e.threads.respond({
      threadId: e.threadId,
      requestKey: "r1",
      interactionId: waiting.pending[0].id,
      answers: [{ questionId: "region", value: "eu" }],
    });
    const done = await e.threads.waitForIdle(e.threadId, { timeoutMs: 10_000 });
    assert.equal(done.turns.at(-1)?.outcome, "completed");
  } finally {
    await e.host.shutdown();
  }
});
