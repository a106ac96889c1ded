/**
 * Floret research agents: a lead agent starts two researchers as child
 * threads, waits for both and answers from their reports. Each researcher
 * searches the web (`web_search`), reads the best hit (`web_fetch`) and
 * reports what it found with its source. Everything here is offline: the
 * models are scripted, the search backend and the web pages live in memory.
 *
 *   bun examples/research.ts
 *
 * With real services, swap in a model gateway (`openAIResponses`,
 * `anthropicMessages`), `braveSearch({ apiKey })` for the in-memory backend,
 * and drop `fetch`/`resolve` from `webFetchTool` (see docs/web-search.md).
 * The children are ordinary threads with a parent: the end of the script
 * lists them, with the searches and fetches each one made.
 */
import {
  defineAgent,
  memoryStore,
  openHost,
  type ProviderRequest,
  type ToolDefinition,
} from "@floret/engine";
import { scriptedGateway, type ScriptStep } from "@floret/engine/testing";
import { webFetchTool } from "@floret/engine/web-fetch";
import { type SearchBackend, webSearchTool } from "@floret/engine/web-search";

/** The JSON outputs of the lead's earlier calls to one tool, read from the request it is sent. */
function outputsOf(request: ProviderRequest, tool: string): Record<string, unknown>[] {
  return request.messages.flatMap((m) =>
    m.role === "tool" && m.name === tool ? [JSON.parse(m.output)] : []
  );
}

/** The latest output of a tool in the request (what the model just read). */
function lastOutput(request: ProviderRequest, tool: string): string {
  const outputs = request.messages.flatMap((m) =>
    m.role === "tool" && m.name === tool ? [m.output] : []
  );
  return outputs.at(-1) ?? "";
}

// The web of this example: two shop pages, and an index that finds them.
const PAGES: Record<string, { title: string; html: string }> = {
  "https://kettles.example/prices": {
    title: "Kettle prices, December",
    html: "<h1>Kettle prices</h1><p>The Aster kettle costs 39 €. The Birch kettle costs 54 €.</p>",
  },
  "https://reviews.example/kettles": {
    title: "Kettle reviews",
    html: "<h1>Reviews</h1><p>Birch is quieter and keeps water hot for longer.</p>",
  },
};

// A search backend is any object with search(query, { signal, count }).
const memorySearch: SearchBackend = {
  search(query, { count }) {
    const words = query.toLowerCase().split(/\s+/);
    // Best first: the pages whose address and title share the most words with the query.
    const score = (text: string) => words.filter((word) => text.includes(word)).length;
    const hits = Object.entries(PAGES)
      .map(([url, page]) => ({ url, page, score: score(`${url} ${page.title.toLowerCase()}`) }))
      .filter((hit) => hit.score > 0)
      .sort((a, b) => b.score - a.score)
      .map(({ url, page }) => ({
        title: page.title,
        url,
        snippet: page.html.replace(/<[^>]+>/g, " "),
      }));
    return Promise.resolve(hits.slice(0, count));
  },
};

// web_fetch checks every address it connects to, so the offline transport
// stands behind a public address; "the internet" is the PAGES table. The
// resolve and fetch hooks are for tests and demos: real hosts leave them out.
const webFetch = webFetchTool({
  resolve: () => Promise.resolve(["93.184.215.14"]),
  fetch: (request) => {
    const page = PAGES[request.url];
    return Promise.resolve(
      page
        ? new Response(page.html, { headers: { "content-type": "text/html; charset=utf-8" } })
        : new Response("Not found", { status: 404 }),
    );
  },
});

// Each researcher searches, reads the first result, reports with its source, then stops.
const researcher = (id: string, query: string, finding: string) =>
  defineAgent({
    id,
    systemPrompt: `You research ${id}. Search the web, read the best page, report your ` +
      "finding with its source to the lead, then stop.",
    tools: [webSearchTool({ backend: memorySearch, count: 3 }), webFetch] as ToolDefinition[],
    gateway: scriptedGateway([
      { toolCalls: [{ name: "web_search", arguments: { query } }] },
      // The URL to read comes from the search results the model was just sent.
      (request): ScriptStep => {
        const url = /https?:\/\/\S+/.exec(lastOutput(request, "web_search"))?.[0] ?? "";
        return { toolCalls: [{ name: "web_fetch", arguments: { url } }] };
      },
      (request): ScriptStep => {
        const source = /^URL: (\S+)/m.exec(lastOutput(request, "web_fetch"))?.[1];
        return {
          toolCalls: [{
            name: "report_to_parent",
            arguments: { text: `${finding} (source: ${source})` },
          }],
        };
      },
      { text: "Reported." },
    ]),
  });

const lead = defineAgent({
  id: "lead",
  systemPrompt: "Split the question between your researchers, wait for them, then answer.",
  subagents: [
    researcher(
      "prices",
      "kettle prices",
      "The Aster kettle costs 39 € and the Birch kettle 54 €.",
    ),
    researcher(
      "reviews",
      "kettle reviews",
      "Reviewers prefer the Birch kettle: quieter, and it keeps heat longer.",
    ),
  ],
  gateway: scriptedGateway([
    {
      toolCalls: [
        {
          name: "spawn_agent",
          arguments: { agent: "prices", task: "Compare kettle prices", title: "Prices" },
        },
        {
          name: "spawn_agent",
          arguments: { agent: "reviews", task: "Summarise kettle reviews", title: "Reviews" },
        },
      ],
    },
    // The children's ids exist only now: the next step reads them from the spawn results.
    (request) => ({
      toolCalls: [{
        name: "wait_agents",
        arguments: { threadIds: outputsOf(request, "spawn_agent").map((o) => o.threadId) },
      }],
    }),
    (request) => {
      const [waited] = outputsOf(request, "wait_agents") as {
        agents: { report?: string }[];
      }[];
      const reports = waited.agents.map((agent) => agent.report).join(" ");
      return { text: `From my researchers: ${reports} So: Aster if price matters, else Birch.` };
    },
  ]),
});

const host = await openHost({ store: memoryStore() });
const threads = host.threads({ agent: lead });
const { threadId } = await threads.create({ requestKey: "research:create", title: "Kettles" });
const question = "Which kettle should I buy?";
console.log(`user: ${question}`);
await threads.send({ threadId, requestKey: "research:send", input: { text: question } });
const view = await threads.waitForIdle(threadId, { timeoutMs: 60_000 });

for (const item of view.items) {
  if (item.kind === "tool") console.log(`  [${item.tool?.name}] → ${item.tool?.output}`);
  if (item.kind === "assistant") console.log(`lead: ${item.text}`);
}
const { threads: children } = await threads.list({ parentThreadId: threadId });
console.log(`\n${children.length} child threads of ${threadId}:`);
for (const child of children.sort((a, b) => (a.createdAt < b.createdAt ? -1 : 1))) {
  const childView = await threads.view(child.threadId);
  console.log(`  ${child.title}: ${childView.status}, turn ${childView.turns.at(-1)?.outcome}`);
  for (const item of childView.items) {
    const tool = item.kind === "tool" ? item.tool : undefined;
    if (tool?.name === "web_search") {
      const urls = tool.activity?.web?.results?.map((result) => result.url).join(", ");
      console.log(`    searched ${JSON.stringify(tool.activity?.web?.query)} → ${urls}`);
    }
    if (tool?.name === "web_fetch") {
      console.log(`    read ${JSON.parse(tool.arguments).url} (${tool.status})`);
    }
  }
}
await host.shutdown();
