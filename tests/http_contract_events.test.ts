// Black-box checks of `@floret/engine/http`, written from http.md and the
// "@floret/engine/http" part of public-api.d.ts only: the events stream and
// the client's subscriptions.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { type ThreadUpdate } from "@floret/engine";
import { threadApi, threadClient } from "@floret/engine/http";
import {
  errorOf,
  fakeService,
  get,
  parseSse,
  realEngine,
  viewOf,
} from "./support/http_contract_support.ts";

// ------------------------------------------------------------ events (SSE)

describe("events route", () => {
  test("subscribes before reading the view: view first, then batches above viewVersion in order, resync ends it", async () => {
    const batch = (version: number): ThreadUpdate => ({
      type: "batch",
      baseVersion: version - 1,
      version,
      ops: [],
    });
    const fake = fakeService({
      view: (threadId: string) => {
        // An update that lands between subscribe and view must not be lost.
        for (const subscription of fakeSubscriptions()) subscription.push(batch(4));
        return viewOf(threadId, 3);
      },
    });
    const fakeSubscriptions = () => fake.subscriptions;
    const app = threadApi(fake.service, { authorize: () => true });
    const response = await app.fetch(get("/threads/t1/events"));
    assert.equal(response.status, 200);
    assert.match(response.headers.get("content-type") ?? "", /text\/event-stream/);
    assert.equal(fake.subscriptions.length, 1);
    const subscription = fake.subscriptions[0]!;
    for (const version of [2, 3, 5, 6]) subscription.push(batch(version));
    subscription.push({ type: "resync", reason: "behind" });
    const events = parseSse(await response.text()).filter((event) => event.comment === undefined);
    assert.deepEqual(events.map((event) => event.event), [
      "view",
      "batch",
      "batch",
      "batch",
      "resync",
    ]);
    assert.deepEqual(JSON.parse(events[0]!.data!), viewOf("t1", 3));
    assert.deepEqual(events.slice(1, 4).map((event) => JSON.parse(event.data!)), [
      batch(4),
      batch(5),
      batch(6),
    ]);
    assert.equal(JSON.parse(events[4]!.data!).type, "resync");
    assert.deepEqual(
      fake.calls.map((call) => call.method),
      ["subscribe", "view"],
    );
  });

  test("an idle stream carries `: ping` comment lines (interval shortened through pingIntervalMs)", async () => {
    // http.md's 15 s default is the option's default; waiting it out would make a slow test, so the
    // interval is shortened and the test waits for pings, not for a time.
    const fake = fakeService();
    const controller = new AbortController();
    const app = threadApi(fake.service, { authorize: () => true, pingIntervalMs: 5 });
    const response = await app.fetch(get("/threads/t1/events", { signal: controller.signal }));
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let text = "";
    while ((text.match(/^: ping$/gm) ?? []).length < 2) {
      const { value, done } = await reader.read();
      assert.equal(done, false, "the stream stays open while idle");
      text += decoder.decode(value, { stream: true });
    }
    fake.subscriptions[0]!.push({ type: "batch", baseVersion: 3, version: 4, ops: [] });
    while (!text.includes("event: batch")) {
      const { value, done } = await reader.read();
      assert.equal(done, false);
      text += decoder.decode(value, { stream: true });
    }
    const events = parseSse(text);
    assert.equal(events[0]!.event, "view");
    assert.deepEqual(
      events.filter((event) => event.event !== undefined).map((event) => event.event),
      ["view", "batch"],
    );
    controller.abort();
    await reader.cancel();
  });

  test("closing the request aborts the subscription", async () => {
    const fake = fakeService();
    const app = threadApi(fake.service, { authorize: () => true });
    const controller = new AbortController();
    const response = await app.fetch(get("/threads/t1/events", { signal: controller.signal }));
    const reader = response.body!.getReader();
    await reader.read();
    controller.abort();
    await reader.cancel();
    const subscription = fake.subscriptions[0]!;
    for (let i = 0; i < 2000 && subscription.signal?.aborted !== true; i++) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    assert.equal(subscription.signal?.aborted, true);
  });

  test("an unknown thread answers 404 thread_not_found as JSON", async () => {
    const { host, threads } = await realEngine();
    try {
      const response = await threadApi(threads, { authorize: () => true }).fetch(
        get("/threads/missing/events"),
      );
      assert.equal(response.status, 404);
      assert.equal((await errorOf(response)).code, "thread_not_found");
    } finally {
      await host.shutdown();
    }
  });

  test("the client skips the view event and pings, yields batch and resync as sent, and reconnects after resync", async () => {
    const sse = (...lines: string[]) =>
      new Response(lines.join("\n"), { headers: { "content-type": "text/event-stream" } });
    const batch = (version: number) => ({
      type: "batch",
      baseVersion: version - 1,
      version,
      ops: [],
    });
    const responses = [
      sse(
        ": ping",
        "",
        "event: view",
        `data: ${JSON.stringify(viewOf("t1", 3))}`,
        "",
        ": ping",
        "",
        "event: batch",
        `data: ${JSON.stringify(batch(4))}`,
        "",
        ": ping",
        "",
        "event: resync",
        `data: ${JSON.stringify({ type: "resync", reason: "behind" })}`,
        "",
        "",
      ),
      sse(
        "event: view",
        `data: ${JSON.stringify(viewOf("t1", 9))}`,
        "",
        "event: batch",
        `data: ${JSON.stringify(batch(10))}`,
        "",
        "",
      ),
    ];
    const paths: string[] = [];
    const client = threadClient({
      baseUrl: "http://floret.test",
      fetch: (request) => {
        paths.push(new URL(request.url).pathname);
        const next = responses.shift();
        return next ?? new Promise<Response>(() => {});
      },
    });
    const seen: unknown[] = [];
    for await (const update of client.subscribe("t1")) {
      seen.push(update);
      if (seen.length === 3) break;
    }
    assert.deepEqual(seen, [batch(4), { type: "resync", reason: "behind" }, batch(10)]);
    assert.deepEqual(paths, ["/threads/t1/events", "/threads/t1/events"]);
  });

  test("a client subscription over a real host sees the turn's batches; aborting ends its loop quietly", async () => {
    const { host, threads } = await realEngine([{ text: "streamed answer" }]);
    try {
      const client = threadClient({
        baseUrl: "http://floret.test",
        fetch: threadApi(threads, { authorize: () => true }).fetch,
      });
      const { threadId } = await client.create({ requestKey: "c-1" });
      const before = await client.view(threadId);
      const controller = new AbortController();
      const versions: number[] = [];
      const loop = (async () => {
        for await (const update of client.subscribe(threadId, { signal: controller.signal })) {
          if (update.type === "batch") versions.push(update.version);
        }
      })();
      // The client registers when the events response arrives; wait until it has.
      for (let i = 0; i < 50; i++) await new Promise((resolve) => setTimeout(resolve, 5));
      await client.send({ threadId, requestKey: "s-1", input: { text: "go" } });
      const after = await client.waitForIdle(threadId);
      for (let i = 0; i < 4000 && versions.at(-1) !== after.viewVersion; i++) {
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      assert.ok(versions.length > 0);
      assert.deepEqual([...versions].sort((a, b) => a - b), versions, "batches come in order");
      assert.ok(versions[0]! > before.viewVersion);
      assert.equal(versions.at(-1), after.viewVersion);
      controller.abort();
      await loop;
    } finally {
      await host.shutdown();
    }
  });
});
