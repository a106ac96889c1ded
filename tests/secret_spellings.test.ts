// DESIGN §11 "Secrets stay out": a secret answer is redacted in every spelling it comes
// back in, and what the model writes during the run that holds it is stored redacted,
// while the tool it calls still receives the real arguments.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import {
  defineAgent,
  defineTool,
  type Gateway,
  memoryStore,
  openHost,
  ProviderError,
  type ThreadUpdate,
} from "@floret/engine";
import { scriptedGateway } from "@floret/engine/testing";
import { FAST_RETRY } from "./support/engine.ts";
import { askUser } from "./support/interactions.ts";
import { readThread } from "./support/journal_reader.ts";
import { leaks, SECRET, spellings } from "./support/secret_spellings.ts";

const spelled = spellings(SECRET);

/** A scripted gateway whose `failAt`-th request fails with an error quoting the request. */
function quotingGateway(failAt: number, steps: Parameters<typeof scriptedGateway>[0]): Gateway {
  const inner = scriptedGateway(steps);
  let n = 0;
  return {
    info: inner.info,
    stream(request, options) {
      if (++n !== failAt) return inner.stream(request, options);
      // Providers echo parts of the request in their errors, escaped their own way.
      const error = new ProviderError(
        `400 invalid request: {"content":"${spelled.json}"} (q=${spelled.url})`,
        {
          status: 400,
          retry: "never",
          kind: "invalid_request",
          body:
            `{"error":{"message":"bad input ${spelled.unicodeAll} near '${spelled.first14}…'"}}`,
          cause: new Error(`upstream rejected ${spelled.unicodeAscii} / ${spelled.unicodeUpper}`),
        },
      );
      return {
        [Symbol.asyncIterator]: () => ({ next: () => Promise.reject(error) }),
      };
    },
  };
}

describe("secret answers stay out in every spelling", () => {
  test("model text, tool arguments, tool output and a quoting provider error are stored redacted", async () => {
    const store = memoryStore();
    const received: string[] = [];
    const login = defineTool({
      name: "login",
      description: "Logs in",
      input: z.object({ password: z.string(), hint: z.string() }),
      effect: "read",
      execute: ({ password }) => {
        received.push(password);
        return `logged in with ${password}`;
      },
    });
    const gateway = quotingGateway(3, [
      askUser([{ id: "pw", prompt: "Password?", secret: true }]),
      {
        text: `Trying ${SECRET} now.`,
        toolCalls: [{ name: "login", arguments: { password: SECRET, hint: spelled.first14 } }],
      },
    ]);
    const events: string[] = [];
    const host = await openHost({ store, onEvent: (event) => events.push(JSON.stringify(event)) });
    const threads = host.threads({
      agent: defineAgent({
        id: "a",
        systemPrompt: "s",
        gateway,
        tools: [login],
        providerRetry: FAST_RETRY,
      }),
    });
    const { threadId } = await threads.create({ requestKey: "c" });
    const updates: ThreadUpdate[] = [];
    const stop = new AbortController();
    const watching = (async () => {
      for await (const update of threads.subscribe(threadId, { signal: stop.signal })) {
        updates.push(update);
      }
    })().catch(() => {});
    await threads.send({ threadId, requestKey: "s", input: { text: "log me in" } });
    const waiting = await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
    await threads.respond({
      threadId,
      requestKey: "r",
      interactionId: waiting.pending[0].id,
      answers: [{ questionId: "pw", value: SECRET }],
    });
    const done = await threads.waitForIdle(threadId, { timeoutMs: 10_000 });

    assert.deepEqual(received, [SECRET], "the tool received the real arguments");
    assert.equal(done.turns.at(-1)?.failure?.code, "provider_error");
    const { entries } = await readThread(store, threadId);
    const journal = JSON.stringify(entries);
    assert.match(journal, /secret answer redacted/);
    assert.deepEqual(leaks(journal), [], "the journal");
    // The stored arguments are still JSON, with the secret redacted inside.
    const step = entries.find((entry) => entry.calls?.some((call) => call.name === "login"));
    const args = (step?.calls?.[0] as { arguments?: string } | undefined)?.arguments ?? "";
    assert.match(JSON.parse(args).password, /secret answer redacted/);
    assert.deepEqual(leaks(JSON.stringify(done)), [], "the view");
    const rows = await store.list({ prefix: [] });
    const stored = rows.map((row) => new TextDecoder().decode(row.value)).join("\n");
    assert.deepEqual(leaks(stored), [], "every stored row");
    assert.deepEqual(leaks(events.join("\n")), [], "observation events");
    stop.abort();
    await watching;
    assert.ok(updates.length > 0);
    assert.deepEqual(leaks(JSON.stringify(updates)), [], "update batches");
    await host.shutdown();
  });

  test("a secret's spellings are found inside longer text and a run of 12 of its characters is enough", async () => {
    const store = memoryStore();
    const gateway = scriptedGateway([
      askUser([{ id: "pw", prompt: "Password?", secret: true }]),
      { text: `a${SECRET.slice(5, 17)}b c${spelled.url.slice(3)}d ${spelled.json}` },
    ]);
    const host = await openHost({ store });
    const threads = host.threads({ agent: defineAgent({ id: "a", systemPrompt: "s", gateway }) });
    const { threadId } = await threads.create({ requestKey: "c" });
    await threads.send({ threadId, requestKey: "s", input: { text: "go" } });
    const waiting = await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
    await threads.respond({
      threadId,
      requestKey: "r",
      interactionId: waiting.pending[0].id,
      answers: [{ questionId: "pw", value: SECRET }],
    });
    const done = await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
    const text = done.items.findLast((item) => item.kind === "assistant")?.text ?? "";
    assert.equal(
      text,
      "a[secret answer redacted]b c[secret answer redacted]d [secret answer redacted]",
    );
    await host.shutdown();
  });

  test("text streamed in small pieces shows live without ever spelling the secret", async () => {
    const text = `Your password ${SECRET} is set; ${spelled.url} too.`;
    const inner = scriptedGateway([askUser([{ id: "pw", prompt: "Password?", secret: true }])]);
    let n = 0;
    const gateway: Gateway = {
      info: inner.info,
      stream(request, options) {
        if (++n === 1) return inner.stream(request, options);
        return (async function* () {
          // Five characters at a time: no delta holds 12 characters of the secret.
          for (let i = 0; i < text.length; i += 5) {
            yield { type: "text" as const, delta: text.slice(i, i + 5) };
          }
          yield { type: "finish" as const, reason: "stop" as const };
        })();
      },
    };
    const host = await openHost({ store: memoryStore() });
    const threads = host.threads({ agent: defineAgent({ id: "a", systemPrompt: "s", gateway }) });
    const { threadId } = await threads.create({ requestKey: "c" });
    await threads.send({ threadId, requestKey: "s", input: { text: "go" } });
    const waiting = await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
    const updates: ThreadUpdate[] = [];
    const stop = new AbortController();
    const watching = (async () => {
      for await (const update of threads.subscribe(threadId, { signal: stop.signal })) {
        updates.push(update);
      }
    })().catch(() => {});
    await threads.respond({
      threadId,
      requestKey: "r",
      interactionId: waiting.pending[0].id,
      answers: [{ questionId: "pw", value: SECRET }],
    });
    const done = await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
    stop.abort();
    await watching;
    const appended = updates.flatMap((update) => update.type === "batch" ? update.ops : [])
      .filter((op) => op.op === "append-text").map((op) => (op as { text: string }).text).join("");
    // The first piece opens the live item (an `add`); the rest are appended as they become safe.
    assert.ok(appended.includes("password [secret answer redacted] is set"), appended);
    assert.deepEqual(leaks(appended), [], "the live text");
    assert.deepEqual(leaks(JSON.stringify(updates)), [], "update batches");
    assert.equal(
      done.items.findLast((item) => item.kind === "assistant")?.text,
      "Your password [secret answer redacted] is set; [secret answer redacted] too.",
    );
    await host.shutdown();
  });

  test("a short numeric secret passed as a number is stored redacted, the arguments still JSON", async () => {
    const store = memoryStore();
    const pins: number[] = [];
    const unlock = defineTool({
      name: "unlock",
      description: "Unlocks",
      input: z.object({ pin: z.number() }),
      effect: "read",
      execute: ({ pin }) => {
        pins.push(pin);
        return "unlocked";
      },
    });
    const gateway = scriptedGateway([
      askUser([{ id: "pin", prompt: "PIN?", secret: true }]),
      { toolCalls: [{ name: "unlock", arguments: { pin: 482139756 } }] },
      { text: "done" },
    ]);
    const host = await openHost({ store });
    const threads = host.threads({
      agent: defineAgent({ id: "a", systemPrompt: "s", gateway, tools: [unlock] }),
    });
    const { threadId } = await threads.create({ requestKey: "c" });
    await threads.send({ threadId, requestKey: "s", input: { text: "go" } });
    const waiting = await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
    await threads.respond({
      threadId,
      requestKey: "r",
      interactionId: waiting.pending[0].id,
      answers: [{ questionId: "pin", value: "482139756" }],
    });
    const done = await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
    assert.equal(done.turns.at(-1)?.outcome, "completed");
    assert.deepEqual(pins, [482139756], "the tool got the real number");
    const { entries } = await readThread(store, threadId);
    assert.ok(!JSON.stringify(entries).includes("482139756"));
    const step = entries.find((entry) => entry.calls?.some((call) => call.name === "unlock"));
    const args = (step?.calls?.[0] as { arguments?: string } | undefined)?.arguments ?? "";
    assert.deepEqual(JSON.parse(args), { pin: "[secret answer redacted]" });
    await host.shutdown();
  });
  test("a child spawned by the run that holds a secret never gets it: its task and title are redacted", async () => {
    const store = memoryStore();
    const childRequests: string[] = [];
    const worker = scriptedGateway([(request) => {
      childRequests.push(JSON.stringify(request.messages));
      return { text: "worked" };
    }]);
    const gateway = scriptedGateway([
      askUser([{ id: "pw", prompt: "Password?", secret: true }]),
      {
        toolCalls: [{
          name: "spawn_agent",
          arguments: { agent: "worker", task: `Log in with ${SECRET}`, title: spelled.first14 },
        }],
      },
      { text: "spawned" },
    ]);
    const host = await openHost({ store });
    const threads = host.threads({
      agent: defineAgent({
        id: "lead",
        systemPrompt: "s",
        gateway,
        subagents: [defineAgent({ id: "worker", systemPrompt: "w", gateway: worker })],
      }),
    });
    const { threadId } = await threads.create({ requestKey: "c" });
    await threads.send({ threadId, requestKey: "s", input: { text: "go" } });
    const waiting = await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
    await threads.respond({
      threadId,
      requestKey: "r",
      interactionId: waiting.pending[0].id,
      answers: [{ questionId: "pw", value: SECRET }],
    });
    const done = await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
    assert.equal(done.turns.at(-1)?.outcome, "completed");
    const spawned = done.items.find((item) => item.tool?.name === "spawn_agent");
    const childId = JSON.parse(spawned?.tool?.output ?? "{}").threadId as string;
    const child = await threads.waitForIdle(childId, { timeoutMs: 10_000 });
    assert.match(child.items[0]?.text ?? "", /^Log in with \[secret answer redacted\]/);
    assert.equal(childRequests.length, 1, "the child ran its task");
    assert.deepEqual(leaks(childRequests.join("\n")), [], "the child's provider request");
    const rows = await store.list({ prefix: [] });
    const stored = rows.map((row) => new TextDecoder().decode(row.value)).join("\n");
    assert.deepEqual(leaks(stored), [], "every stored row, the child's included");
    await host.shutdown();
  });
});
