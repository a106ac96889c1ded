// Hosted web search passed through openAIResponses and anthropicMessages:
// the request asks for the provider's search tool, a hosted call shows as a
// tool item with `tool.hosted` and its query, and the assistant item carries
// `sources` from the citations — live, and after a reload from the journal.
// The streams are built in each provider's documented format
// (tests/fixtures/providers/BUILT.md) and served through an injected fetch.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import {
  defineAgent,
  FloretError,
  type Gateway,
  memoryStore,
  openHost,
  type ThreadItem,
  type ViewOp,
} from "@floret/engine";
import { openAIResponses } from "@floret/engine/openai";
import { anthropicMessages } from "@floret/engine/anthropic";

const FIXTURES = new URL("./fixtures/providers/", import.meta.url);

function sseFetch(name: string, bodies: unknown[]): typeof fetch {
  const stream = readFileSync(new URL(name, FIXTURES));
  return ((_input: RequestInfo | URL, init?: RequestInit) => {
    bodies.push(JSON.parse(String(init?.body)));
    return Promise.resolve(
      new Response(stream, { headers: { "content-type": "text/event-stream" } }),
    );
  }) as typeof fetch;
}

/** The request's tools that are not function tools (the built-in ask_user is one). */
function hostedOf(body: Record<string, unknown>): unknown[] {
  const tools = (body.tools ?? []) as { type?: string }[];
  return tools.filter((tool) => tool.type !== undefined && tool.type !== "function");
}

interface Run {
  live: ThreadItem[];
  reloaded: ThreadItem[];
  ops: ViewOp[];
}

/** One turn on a host, the view it shows, the ops it published, and the view a second host reads. */
async function runTurn(gateway: Gateway): Promise<Run> {
  const store = memoryStore();
  const agent = defineAgent({ id: "researcher", systemPrompt: "Search.", gateway });
  const host = await openHost({ store });
  const threads = host.threads({ agent });
  const { threadId } = await threads.create({ requestKey: "create" });
  const ops: ViewOp[] = [];
  const abort = new AbortController();
  const updates = (async () => {
    for await (const update of threads.subscribe(threadId, { signal: abort.signal })) {
      if (update.type === "batch") ops.push(...update.ops);
    }
  })().catch(() => {});
  await threads.send({ threadId, requestKey: "send", input: { text: "What is Floret?" } });
  const view = await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
  assert.equal(view.turns.at(-1)?.outcome, "completed", JSON.stringify(view.turns));
  const second = await openHost({ store });
  const reloaded = await second.threads({ agent }).view(threadId);
  abort.abort();
  await updates;
  await second.shutdown();
  await host.shutdown();
  return { live: view.items, reloaded: reloaded.items, ops };
}

function checkItems(items: ThreadItem[], expected: {
  callId: string;
  text: string;
  sources: { url: string; title?: string; start?: number; end?: number }[];
  results: string[];
}): void {
  const hosted = items.filter((item) => item.kind === "tool" && item.tool?.hosted === true);
  assert.equal(hosted.length, 1, JSON.stringify(items));
  const tool = hosted[0].tool!;
  assert.equal(tool.callId, expected.callId);
  assert.equal(tool.name, "web_search");
  assert.equal(tool.status, "completed");
  assert.deepEqual(JSON.parse(tool.arguments), { query: "floret engine runtimes" });
  assert.equal(tool.activity?.web?.query, "floret engine runtimes");
  assert.deepEqual(tool.activity?.web?.results?.map((r) => r.url), expected.results);
  const answer = items.filter((item) => item.kind === "assistant").at(-1)!;
  assert.equal(answer.text, expected.text);
  assert.deepEqual(answer.sources, expected.sources);
  for (const source of expected.sources) {
    if (source.start !== undefined) {
      assert.ok(answer.text!.slice(source.start, source.end).length > 0);
    }
  }
}

describe("OpenAI Responses hosted web search", () => {
  const text = "Floret is a durable engine for AI agents and it runs on Deno, Bun and Node — café.";
  const split = "Floret is a durable engine for AI agents".length;
  const expected = {
    callId: "ws_built_1",
    text,
    sources: [
      { url: "https://floret.example/docs", title: "Floret docs", start: 0, end: split },
      { url: "https://runtimes.example/", title: "Runtimes", start: split, end: text.length },
    ],
    results: ["https://floret.example/docs", "https://runtimes.example/"],
  };

  test("the request asks for web_search; the call and the citations show live and after a reload", async () => {
    const bodies: Record<string, unknown>[] = [];
    const gateway = openAIResponses({
      model: "gpt-5-mini",
      apiKey: "sk-test-hosted",
      hostedTools: [{ type: "web_search" }],
      fetch: sseFetch("openai-responses-stream-web-search.built.sse", bodies),
    });
    const run = await runTurn(gateway);
    assert.equal(bodies.length, 1);
    assert.deepEqual(hostedOf(bodies[0]), [{ type: "web_search" }]);
    checkItems(run.live, expected);
    checkItems(run.reloaded, expected);
    const added = run.ops.filter((op) => op.op === "add" && op.item.tool?.hosted);
    assert.equal(added.length, 1, "subscribers saw the hosted call");
    const replaced = run.ops.filter((op) =>
      (op.op === "replace" || op.op === "add") && op.item.kind === "assistant" &&
      op.item.sources !== undefined
    );
    assert.equal(replaced.length, 1, "subscribers saw the sources");
    assert.equal(
      run.live.findIndex((i) => i.kind === "tool"),
      run.reloaded.findIndex((i) => i.kind === "tool"),
    );
  });

  test("without hostedTools the request has no web_search tool", async () => {
    const bodies: Record<string, unknown>[] = [];
    const gateway = openAIResponses({
      model: "gpt-5-mini",
      apiKey: "sk-test-hosted",
      fetch: sseFetch("openai-responses-stream-web-search.built.sse", bodies),
    });
    await runTurn(gateway);
    assert.deepEqual(hostedOf(bodies[0]), []);
  });
});

describe("Anthropic hosted web search", () => {
  const text =
    "I'll search for that.Floret is a durable engine for AI agents, and it runs on Deno, Bun and Node.";
  const first = "I'll search for that.".length;
  const cited = first + "Floret is a durable engine for AI agents".length;
  const second = cited + ", and ".length;
  const expected = {
    callId: "srvtoolu_built_1",
    text,
    sources: [
      { url: "https://floret.example/docs", title: "Floret docs", start: first, end: cited },
      { url: "https://runtimes.example/", title: "Runtimes", start: second, end: text.length },
    ],
    results: ["https://floret.example/docs", "https://runtimes.example/"],
  };

  test("the request asks for web_search_20250305 with max_uses; the call and the citations show live and after a reload", async () => {
    const bodies: Record<string, unknown>[] = [];
    const gateway = anthropicMessages({
      model: "claude-sonnet-4-6",
      apiKey: "sk-ant-test-hosted",
      promptCache: false,
      hostedTools: [{ type: "web_search", maxUses: 3 }],
      fetch: sseFetch("anthropic-stream-web-search.built.sse", bodies),
    });
    const run = await runTurn(gateway);
    assert.deepEqual(hostedOf(bodies[0]), [
      { type: "web_search_20250305", name: "web_search", max_uses: 3 },
    ]);
    checkItems(run.live, expected);
    checkItems(run.reloaded, expected);
    assert.equal(run.live.at(-1)?.tool?.activity?.web?.results?.[0].title, "Floret docs");
  });

  test("a recorded server tool that is not a search (code execution) adds no hosted item", async () => {
    const gateway = anthropicMessages({
      model: "claude-sonnet-4-6",
      apiKey: "sk-ant-test-hosted",
      fetch: sseFetch("anthropic-stream-thinking-server-tool.sse", []),
    });
    const run = await runTurn(gateway);
    assert.equal(run.live.filter((item) => item.kind === "tool").length, 0);
    assert.equal(run.live.find((item) => item.kind === "assistant")?.sources, undefined);
  });
});

describe("hostedTools options", () => {
  const bad: [string, unknown][] = [
    ["not an array", { type: "web_search" }],
    ["an unknown type", [{ type: "code_interpreter" }]],
    ["maxUses 0", [{ type: "web_search", maxUses: 0 }]],
    ["maxUses 1.5", [{ type: "web_search", maxUses: 1.5 }]],
    ["an unknown field", [{ type: "web_search", domains: ["a"] }]],
    ["web_search twice", [{ type: "web_search" }, { type: "web_search" }]],
  ];
  for (const [label, hostedTools] of bad) {
    test(`${label} is invalid_input on both gateways`, () => {
      for (const make of [openAIResponses, anthropicMessages]) {
        assert.throws(
          () => make({ model: "m", apiKey: "k", hostedTools } as Parameters<typeof make>[0]),
          (error) => error instanceof FloretError && error.code === "invalid_input",
        );
      }
    });
  }
});

describe("any gateway can report hosted calls and sources on finish", () => {
  function gatewayFinishing(finish: Record<string, unknown>): Gateway {
    return {
      info: { provider: "custom", model: "m", stateKey: "custom:m", capabilities: {} },
      async *stream() {
        yield { type: "text", delta: "Cited answer." };
        yield { type: "finish", reason: "stop", ...finish } as never;
      },
    };
  }

  test("they are bounded and stored; a bad range is dropped, the source kept", async () => {
    const sources = Array.from({ length: 250 }, (_, i) => ({
      url: `https://s${i}.example/`,
      start: i === 0 ? 5 : 0,
      end: i === 0 ? 2 : 6,
    }));
    const run = await runTurn(gatewayFinishing({
      hosted: [{ callId: "h1", name: "web_search", status: "error", query: "q".repeat(5_000) }],
      sources,
    }));
    const answer = run.reloaded.find((item) => item.kind === "assistant")!;
    assert.equal(answer.sources?.length, 200);
    assert.deepEqual(answer.sources?.[0], { url: "https://s0.example/" });
    assert.deepEqual(answer.sources?.[1], { url: "https://s1.example/", start: 0, end: 6 });
    const hosted = run.reloaded.find((item) => item.tool?.hosted)!;
    assert.equal(hosted.tool?.status, "error");
    assert.equal(hosted.tool?.activity?.web?.query?.length, 1_000);
  });

  test("a finish whose sources are not a list of { url } ends the turn engine_contract", async () => {
    const store = memoryStore();
    const host = await openHost({ store });
    try {
      const threads = host.threads({
        agent: defineAgent({
          id: "bad",
          systemPrompt: "x",
          gateway: gatewayFinishing({ sources: [{ link: "https://x.example/" }] }),
        }),
      });
      const { threadId } = await threads.create({ requestKey: "c" });
      await threads.send({ threadId, requestKey: "s", input: { text: "hi" } });
      const view = await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
      assert.equal(view.turns.at(-1)?.failure?.code, "engine_contract");
    } finally {
      await host.shutdown();
    }
  });
});

test("OpenAI: the hosted search call is replayed in its place in the next request", async () => {
  const bodies: Record<string, unknown>[] = [];
  const gateway = openAIResponses({
    model: "gpt-5-mini",
    apiKey: "sk-test-hosted",
    hostedTools: [{ type: "web_search" }],
    fetch: sseFetch("openai-responses-stream-web-search.built.sse", bodies),
  });
  const host = await openHost({ store: memoryStore() });
  try {
    const threads = host.threads({ agent: defineAgent({ id: "r", systemPrompt: "S.", gateway }) });
    const { threadId } = await threads.create({ requestKey: "c" });
    for (const text of ["What is Floret?", "And where does it run?"]) {
      await threads.send({ threadId, requestKey: text, input: { text } });
      await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
    }
    const input = bodies[1].input as Record<string, unknown>[];
    const at = input.findIndex((item) => item.type === "web_search_call");
    assert.ok(at > 0, JSON.stringify(input));
    assert.deepEqual(input[at], {
      type: "web_search_call",
      id: "ws_built_1",
      status: "completed",
      action: {
        type: "search",
        query: "floret engine runtimes",
        sources: [
          { type: "url", url: "https://floret.example/docs" },
          { type: "url", url: "https://runtimes.example/" },
        ],
      },
    });
    assert.equal(input[at + 1].role, "assistant");
  } finally {
    await host.shutdown();
  }
});
