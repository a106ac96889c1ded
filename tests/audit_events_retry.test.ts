// Audit (round 11): a provider attempt that streams text and then fails, and
// its retry. An observer that joined while the failed attempt's live text was
// showing sees it removed and the retry's text stream in; a second one joins
// between the attempts (the live text already gone). Both end with the view;
// in-process and over HTTP.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import {
  defineAgent,
  type Gateway,
  memoryStore,
  openHost,
  ProviderError,
  type ProviderEvent,
  type ThreadService,
} from "@floret/engine";
import { threadApi, threadClient } from "@floret/engine/http";
import { Observer, stateOf } from "./support/audit_observer.ts";

const services: { name: string; wrap: (threads: ThreadService) => ThreadService }[] = [
  { name: "in-process", wrap: (threads) => threads },
  {
    name: "over HTTP",
    wrap: (threads) => {
      const app = threadApi(threads, { authorize: () => true });
      return threadClient({ baseUrl: "http://127.0.0.1", fetch: (request) => app.fetch(request) });
    },
  },
];

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function latch() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

for (const service of services) {
  describe(`a failed attempt's live text and its retry, ${service.name}`, () => {
    test("observers joined during the failed attempt and between attempts end with the view", async () => {
      const shown = latch(); // the failed attempt's text is out
      const fail = latch(); // the test lets it fail
      const secondStarted = latch();
      const secondGo = latch();
      let attempt = 0;
      const gateway: Gateway = {
        info: { provider: "test", model: "retry", stateKey: "test:retry", capabilities: {} },
        async *stream(): AsyncIterable<ProviderEvent> {
          attempt++;
          if (attempt === 1) {
            yield { type: "text", delta: "doomed " };
            yield { type: "text", delta: "text" };
            shown.open();
            await fail.opened;
            throw new ProviderError("overloaded", { retry: "retryable", status: 529 });
          }
          secondStarted.open();
          await secondGo.opened;
          for (const piece of ["fresh ", "ünïcode ", "answer"]) {
            yield { type: "text", delta: piece };
            await pause(1);
          }
          yield { type: "finish", reason: "stop" };
        },
      };
      const host = await openHost({ store: memoryStore() });
      const threads = service.wrap(host.threads({
        agent: defineAgent({
          id: "retry",
          systemPrompt: "R.",
          gateway,
          providerRetry: { delaysMs: [1] },
        }),
      }));
      const { threadId } = await threads.create({ requestKey: "create" });
      await threads.send({ threadId, requestKey: "s", input: { text: "go" } });
      await shown.opened;
      while ((await threads.view(threadId)).items.at(-1)?.live !== true) await pause(2);
      const during = await Observer.join(threads, threadId);
      assert.equal(during.local.items.at(-1)?.text, "doomed text");
      fail.open();
      await secondStarted.opened;
      while ((await threads.view(threadId)).items.at(-1)?.live === true) await pause(2);
      const between = await Observer.join(threads, threadId);
      assert.equal(between.local.items.length, 1, "the failed attempt's text is gone");
      secondGo.open();
      const final = await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
      assert.deepEqual(final.items.map((item) => item.text), ["go", "fresh ünïcode answer"]);
      for (const [name, observer] of [["during", during], ["between", between]] as const) {
        await observer.reach(final);
        assert.deepEqual(observer.problems, [], name);
        assert.deepEqual(stateOf(observer.local), stateOf(final), name);
        await observer.leave();
      }
      await host.shutdown();
    });
  });
}
