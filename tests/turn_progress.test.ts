/**
 * Issue 29, progress and failure evidence: `runProgress.request` shows when
 * the attempt started and first and last showed output; `runProgress.retry`
 * shows the next attempt, the limit, when and why; a provider failure keeps
 * `failure.provider.evidence` (body ≤ 4 KiB with secrets redacted, causes,
 * timeout stage), which survives a restart.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  defineAgent,
  type Gateway,
  type KvStore,
  memoryStore,
  openHost,
  ProviderError,
  type ProviderEvent,
  type ThreadView,
} from "@floret/engine";

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A store whose close does nothing, so a second host can open it. */
function reopenable(): KvStore {
  const inner = memoryStore();
  return {
    getMany: inner.getMany.bind(inner),
    list: inner.list.bind(inner),
    commit: inner.commit.bind(inner),
    close: async () => {},
  } as KvStore;
}

async function poll(read: () => Promise<ThreadView>, done: (view: ThreadView) => boolean) {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const view = await read();
    if (done(view)) return view;
    if (Date.now() > deadline) throw new Error(`never: ${JSON.stringify(view.runProgress)}`);
    await pause(5);
  }
}

test("runProgress.request shows the attempt's start and its first output", async () => {
  let release!: () => void;
  const held = new Promise<void>((resolve) => release = resolve);
  const gateway: Gateway = {
    info: { provider: "t", model: "m", stateKey: "t:m", capabilities: {} },
    async *stream(): AsyncGenerator<ProviderEvent> {
      yield { type: "text", delta: "hello" };
      await held;
      yield { type: "finish", reason: "stop" };
    },
  };
  const host = await openHost({ store: memoryStore() });
  const threads = host.threads({ agent: defineAgent({ id: "a", systemPrompt: "s", gateway }) });
  const { threadId } = await threads.create({ requestKey: "c" });
  await threads.send({ threadId, requestKey: "s", input: { text: "go" } });
  const view = await poll(
    () => threads.view(threadId),
    (v) => v.runProgress?.request?.firstOutputAt !== undefined,
  );
  const request = view.runProgress!.request!;
  assert.equal(view.runProgress!.phase, "model");
  assert.ok(Date.parse(request.startedAt) <= Date.parse(request.firstOutputAt!));
  assert.ok(Date.parse(request.firstOutputAt!) <= Date.parse(request.lastProgressAt));
  release();
  await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
  await host.shutdown();
});

test("runProgress.retry shows the next attempt, the limit, when and why", async () => {
  let calls = 0;
  const gateway: Gateway = {
    info: { provider: "t", model: "m", stateKey: "t:m", capabilities: {} },
    async *stream(): AsyncGenerator<ProviderEvent> {
      calls++;
      if (calls === 1) {
        throw new ProviderError("busy", { status: 429, retry: "retryable", kind: "rate_limit" });
      }
      yield { type: "text", delta: "ok" };
      yield { type: "finish", reason: "stop" };
    },
  };
  const host = await openHost({ store: memoryStore() });
  const threads = host.threads({
    agent: defineAgent({
      id: "a",
      systemPrompt: "s",
      gateway,
      providerRetry: { delaysMs: [1500, 1500, 1500] },
    }),
  });
  const { threadId } = await threads.create({ requestKey: "c" });
  const before = Date.now();
  await threads.send({ threadId, requestKey: "s", input: { text: "go" } });
  const view = await poll(() => threads.view(threadId), (v) => v.runProgress?.retry !== undefined);
  const retry = view.runProgress!.retry!;
  assert.equal(view.runProgress!.phase, "retry_wait");
  assert.equal(retry.attempt, 2);
  assert.equal(retry.limit, 4);
  assert.equal(retry.reason, "rate_limit");
  assert.ok(Date.parse(retry.nextAttemptAt) > before);
  const done = await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
  assert.equal(done.turns.at(-1)!.outcome, "completed");
  await host.shutdown();
});

test("a provider failure keeps its evidence, redacted and bounded, across a restart", async () => {
  const body = JSON.stringify({
    error: { message: "bad key sk-live-ABCDEFGHIJKLMNOP1234", detail: "x".repeat(10_000) },
  });
  const gateway: Gateway = {
    info: { provider: "t", model: "m", stateKey: "t:m", capabilities: {} },
    // deno-lint-ignore require-yield
    async *stream(): AsyncGenerator<ProviderEvent> {
      throw new ProviderError("refused", {
        status: 400,
        retry: "never",
        kind: "invalid_request",
        body,
        cause: new Error("socket said no", { cause: new TypeError("inner reason") }),
      });
    },
  };
  const store = reopenable();
  let host = await openHost({ store });
  const agent = defineAgent({ id: "a", systemPrompt: "s", gateway });
  const threads = host.threads({ agent });
  const { threadId } = await threads.create({ requestKey: "c" });
  await threads.send({ threadId, requestKey: "s", input: { text: "go" } });
  await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
  await host.shutdown();
  host = await openHost({ store });
  const view = await host.threads({ agent }).view(threadId);
  const failure = view.turns.at(-1)!.failure as {
    code: string;
    provider?: { evidence?: { body?: string; causes?: string[] } };
  };
  assert.equal(failure.code, "provider_error");
  const evidence = failure.provider!.evidence!;
  assert.ok(new TextEncoder().encode(evidence.body!).length <= 4096);
  assert.doesNotMatch(evidence.body!, /ABCDEFGHIJKLMNOP1234/);
  assert.match(evidence.body!, /\[redacted\]/);
  assert.deepEqual(evidence.causes, ["Error: socket said no", "TypeError: inner reason"]);
  await host.shutdown();
});

test("a timeout's evidence names its stage", async () => {
  const gateway: Gateway = {
    info: { provider: "t", model: "m", stateKey: "t:m", capabilities: {} },
    async *stream(_request, { signal }): AsyncGenerator<ProviderEvent> {
      yield { type: "text", delta: "a" };
      await new Promise((_, reject) =>
        signal.addEventListener("abort", () => reject(signal.reason))
      );
    },
  };
  const host = await openHost({ store: memoryStore() });
  const threads = host.threads({
    agent: defineAgent({
      id: "a",
      systemPrompt: "s",
      gateway,
      providerRetry: { disabled: true },
      timeouts: { betweenOutputsMs: 50 },
    }),
  });
  const { threadId } = await threads.create({ requestKey: "c" });
  await threads.send({ threadId, requestKey: "s", input: { text: "go" } });
  const view = await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
  const failure = view.turns.at(-1)!.failure as {
    provider?: { evidence?: { timeoutStage?: string } };
  };
  assert.equal(failure.provider?.evidence?.timeoutStage, "between_outputs");
  await host.shutdown();
});
