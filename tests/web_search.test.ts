// web_search: the tool's options, the bounding of any backend's answer, Brave
// Search through an injected fetch (never the network), and a turn through
// the engine whose stored journal never holds the key.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { FloretError, memoryStore } from "@floret/engine";
import {
  braveSearch,
  type SearchBackend,
  type SearchResult,
  webSearchTool,
} from "@floret/engine/web-search";
import { engine, sendAndWait } from "./support/engine.ts";

const KEY = "brv-secret-key-0123456789";

/** A Brave answer in the documented shape (`web.results[]` with title, url, description). */
function braveAnswer(count: number): unknown {
  return {
    type: "search",
    query: { original: "kettles" },
    web: {
      type: "search",
      results: Array.from({ length: count }, (_, i) => ({
        type: "search_result",
        title: `Kettle <strong>${i}</strong> &amp; more`,
        url: `https://shop${i}.example/kettle`,
        description: `The <strong>best</strong> kettle number ${i}.`,
        language: "en",
      })),
    },
  };
}

interface Sent {
  url: string;
  headers: Headers;
}

function braveFetch(
  sent: Sent[],
  reply: () => Response = () => Response.json(braveAnswer(3)),
): typeof fetch {
  return ((input: RequestInfo | URL, init?: RequestInit) => {
    sent.push({ url: String(input), headers: new Headers(init?.headers) });
    return Promise.resolve(reply());
  }) as typeof fetch;
}

async function storedText(store: ReturnType<typeof memoryStore>): Promise<string> {
  const all = await store.list({ prefix: [] });
  const decoder = new TextDecoder();
  return all.map((entry) => `${JSON.stringify(entry.key)} ${decoder.decode(entry.value)}`).join(
    "\n",
  );
}

describe("options", () => {
  test("the tool is web_search, effect read", () => {
    const tool = webSearchTool({ backend: { search: () => Promise.resolve([]) } });
    assert.equal(tool.name, "web_search");
    assert.equal(tool.effect, "read");
  });

  const bad: [string, unknown][] = [
    ["no options", undefined],
    ["no backend", {}],
    ["a backend without search", { backend: {} }],
    ["count 0", { backend: { search: () => [] }, count: 0 }],
    ["count 11", { backend: { search: () => [] }, count: 11 }],
    ["count 2.5", { backend: { search: () => [] }, count: 2.5 }],
    ["timeoutMs 0", { backend: { search: () => [] }, timeoutMs: 0 }],
  ];
  for (const [label, options] of bad) {
    test(`${label} is invalid_input`, () => {
      assert.throws(
        () => webSearchTool(options as Parameters<typeof webSearchTool>[0]),
        (error) => error instanceof FloretError && error.code === "invalid_input",
      );
    });
  }

  const badBrave: [string, unknown][] = [
    ["no key", {}],
    ["both keys", { apiKey: KEY, resolveApiKey: () => KEY }],
    ["an empty key", { apiKey: " " }],
    ["a resolver that is not a function", { resolveApiKey: KEY }],
  ];
  for (const [label, options] of badBrave) {
    test(`braveSearch with ${label} is invalid_input`, () => {
      assert.throws(
        () => braveSearch(options as Parameters<typeof braveSearch>[0]),
        (error) => error instanceof FloretError && error.code === "invalid_input",
      );
    });
  }
});

describe("braveSearch", () => {
  test("sends the documented GET with the key in X-Subscription-Token, and reads web.results", async () => {
    const sent: Sent[] = [];
    const backend = braveSearch({ apiKey: KEY, fetch: braveFetch(sent) });
    const results = await backend.search("best kettles", {
      signal: new AbortController().signal,
      count: 4,
    });
    assert.equal(sent.length, 1);
    const url = new URL(sent[0].url);
    assert.equal(url.origin + url.pathname, "https://api.search.brave.com/res/v1/web/search");
    assert.equal(url.searchParams.get("q"), "best kettles");
    assert.equal(url.searchParams.get("count"), "4");
    assert.equal(sent[0].headers.get("x-subscription-token"), KEY);
    assert.equal(sent[0].headers.get("accept"), "application/json");
    assert.ok(!sent[0].url.includes(KEY));
    assert.equal(results.length, 3);
    assert.equal(results[0].url, "https://shop0.example/kettle");
  });

  test("resolveApiKey runs right before each request", async () => {
    const sent: Sent[] = [];
    let calls = 0;
    const backend = braveSearch({
      resolveApiKey: () => Promise.resolve(`${KEY}-${++calls}`),
      fetch: braveFetch(sent),
    });
    assert.equal(calls, 0, "not at construction");
    const options = { signal: new AbortController().signal, count: 2 };
    await backend.search("a", options);
    await backend.search("b", options);
    assert.equal(calls, 2);
    assert.deepEqual(sent.map((s) => s.headers.get("x-subscription-token")), [
      `${KEY}-1`,
      `${KEY}-2`,
    ]);
  });

  test("an HTTP error names the status and Brave's reason, never the key", async () => {
    const backend = braveSearch({
      apiKey: KEY,
      fetch: braveFetch([], () =>
        Response.json(
          { type: "ErrorResponse", error: { code: "SUBSCRIPTION_TOKEN_INVALID", detail: KEY } },
          { status: 422 },
        )),
    });
    await assert.rejects(
      backend.search("x", { signal: new AbortController().signal, count: 1 }),
      (error: Error) => {
        assert.match(error.message, /HTTP 422 \(SUBSCRIPTION_TOKEN_INVALID/);
        assert.ok(!error.message.includes(KEY));
        return true;
      },
    );
  });
});

describe("through the engine", () => {
  test("the model reads bounded results; the tool item shows them; the journal never holds the key", async () => {
    const store = memoryStore();
    const sent: Sent[] = [];
    let resolved = 0;
    const tool = webSearchTool({
      backend: braveSearch({
        resolveApiKey: () => {
          resolved++;
          return KEY;
        },
        fetch: braveFetch(sent, () => Response.json(braveAnswer(12))),
      }),
      count: 10,
    });
    const e = await engine([
      { toolCalls: [{ name: "web_search", arguments: { query: "best kettles" } }] },
      { text: "Kettle 0 is best." },
    ], { tools: [tool], store });
    try {
      const view = await sendAndWait(e, "Find kettles");
      assert.equal(view.turns.at(-1)?.outcome, "completed");
      assert.equal(resolved, 1);
      const toolMessage = e.gateway.requests[1].messages.find((m) => m.role === "tool");
      assert.ok(toolMessage?.role === "tool" && !toolMessage.isError);
      const output = toolMessage.output;
      assert.match(
        output,
        /^1\. Kettle 0 & more\n {3}https:\/\/shop0\.example\/kettle\n {3}The best kettle number 0\.$/m,
      );
      assert.match(output, /^10\. /m);
      assert.doesNotMatch(output, /^11\. /m, "at most 10 results");
      assert.doesNotMatch(output, /<strong>/);
      const item = view.items.find((i) => i.kind === "tool")!;
      assert.equal(item.tool?.status, "completed");
      const web = item.tool?.activity?.web;
      assert.equal(web?.operation, "search");
      assert.equal(web?.query, "best kettles");
      assert.equal(web?.results?.length, 10);
      assert.deepEqual(web?.results?.[1], {
        title: "Kettle 1 & more",
        url: "https://shop1.example/kettle",
        snippet: "The best kettle number 1.",
      });
      const stored = await storedText(store);
      assert.ok(stored.includes("shop1.example"), "the results are stored");
      assert.ok(!stored.includes(KEY), "the key is not");
    } finally {
      await e.host.shutdown();
    }
  });

  test("a custom backend: results beyond count, bad URLs and long texts are cut; the activity survives a reload", async () => {
    const store = memoryStore();
    const seen: { query: string; count: number; signal: boolean }[] = [];
    const backend: SearchBackend = {
      search(query, { signal, count }) {
        seen.push({ query, count, signal: signal instanceof AbortSignal });
        const results: SearchResult[] = [
          { title: "x".repeat(5_000), url: "https://long.example/", snippet: "y".repeat(5_000) },
          { title: "Local", url: "file:///etc/passwd" },
          { title: "Bad", url: 42 as unknown as string },
          { title: "Two", url: "https://two.example/" },
          { title: "Three", url: "https://three.example/" },
        ];
        return Promise.resolve(results);
      },
    };
    const e = await engine([
      { toolCalls: [{ name: "web_search", arguments: { query: "  kettles  " } }] },
      { text: "Done." },
    ], { tools: [webSearchTool({ backend, count: 2 })], store });
    try {
      await sendAndWait(e, "Search");
      assert.deepEqual(seen, [{ query: "kettles", count: 2, signal: true }]);
      const output = e.gateway.requests[1].messages.find((m) => m.role === "tool");
      assert.ok(output?.role === "tool");
      assert.ok(output.output.length < 1_200, `bounded: ${output.output.length}`);
      assert.doesNotMatch(output.output, /passwd|three/);
      // A second host on the same store reads the thread from its journal.
      const again = await engine([], { tools: [webSearchTool({ backend })], store });
      try {
        const view = await again.threads.view(e.threadId);
        const web = view.items.find((i) => i.kind === "tool")?.tool?.activity?.web;
        assert.deepEqual(web?.results?.map((r) => r.url), [
          "https://long.example/",
          "https://two.example/",
        ]);
        assert.ok((web?.results?.[0].title?.length ?? 0) <= 200);
      } finally {
        await again.host.shutdown();
      }
    } finally {
      await e.host.shutdown();
    }
  });

  test("a failing backend is an error result the model reads; the turn goes on", async () => {
    const backend: SearchBackend = {
      search: () => Promise.reject(new Error("search service down")),
    };
    const e = await engine([
      { toolCalls: [{ name: "web_search", arguments: { query: "kettles" } }] },
      { text: "Search is down." },
    ], { tools: [webSearchTool({ backend })] });
    try {
      const view = await sendAndWait(e, "Search");
      assert.equal(view.turns.at(-1)?.outcome, "completed");
      const output = e.gateway.requests[1].messages.find((m) => m.role === "tool");
      assert.ok(output?.role === "tool" && output.isError === true);
      assert.match(output.output, /failed: search service down/);
      const item = view.items.find((i) => i.kind === "tool");
      assert.equal(item?.tool?.status, "error");
      assert.equal(item?.tool?.activity?.web?.query, "kettles");
    } finally {
      await e.host.shutdown();
    }
  });
});

test("by default at most 10 results reach the model", async () => {
  const backend: SearchBackend = {
    search: (_query, { count }) =>
      Promise.resolve(
        Array.from({ length: 15 }, (_, i) => ({
          title: `T${i}`,
          url: `https://r${i}.example/`,
          snippet: `asked for ${count}`,
        })),
      ),
  };
  const e = await engine([
    { toolCalls: [{ name: "web_search", arguments: { query: "many" } }] },
    { text: "Done." },
  ], { tools: [webSearchTool({ backend })] });
  try {
    const view = await sendAndWait(e, "Search");
    const web = view.items.find((i) => i.kind === "tool")?.tool?.activity?.web;
    assert.equal(web?.results?.length, 10);
    assert.equal(web?.results?.[0].snippet, "asked for 10");
  } finally {
    await e.host.shutdown();
  }
});
