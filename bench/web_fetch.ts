// web_fetch cost: one call through the engine (host, memory store, scripted
// model) for a 1 KiB text page and a ~2 MiB HTML page served on 127.0.0.1 by
// the real node:http transport. The difference is mostly HTML-to-Markdown.
// Only loopback is contacted (the test-only loopback switch is on).
// Run: npx tsx bench/web_fetch.ts   (also: deno run -A, bun)
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { defineAgent, memoryStore, openHost } from "@floret/engine";
import { scriptedGateway, type ScriptStep } from "@floret/engine/testing";
import { webFetchTool } from "@floret/engine/web-fetch";

const RUNS = 15;
const section = (i: number): string =>
  `<section><h2>Part ${i}</h2><p>Paragraph ${i} with <a href="/p/${i}">a link</a>, ` +
  `<em>emphasis</em> and <code>code</code>.</p><ul><li>one</li><li>two</li></ul>` +
  `<table><tr><th>k</th><th>v</th></tr><tr><td>${i}</td><td>${i * 2}</td></tr></table></section>`;
let html = "<!doctype html><html><head><title>Big</title></head><body>";
for (let i = 0; html.length < 2 * 1024 * 1024 - 20_000; i++) html += section(i);
html += "</body></html>";
const text = "t".repeat(1024);

const server = createServer((req, res) => {
  if (req.url === "/page") res.writeHead(200, { "content-type": "text/html" }).end(html);
  else res.writeHead(200, { "content-type": "text/plain" }).end(text);
});
await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
const port = (server.address() as AddressInfo).port;

const tool = webFetchTool(
  {
    [Symbol.for("@floret/engine/web-fetch:testing")]: { allowLoopback: true },
  } as Parameters<typeof webFetchTool>[0],
);

async function median(path: string): Promise<{ ms: number; outputBytes: number }> {
  const steps: ScriptStep[] = [];
  for (let i = 0; i < RUNS + 1; i++) {
    steps.push({
      toolCalls: [{ name: "web_fetch", arguments: { url: `http://127.0.0.1:${port}${path}` } }],
    });
    steps.push({ text: "ok" });
  }
  const gateway = scriptedGateway(steps);
  const host = await openHost({ store: memoryStore() });
  const threads = host.threads({
    agent: defineAgent({ id: "bench", systemPrompt: "Fetch.", gateway, tools: [tool] }),
  });
  const times: number[] = [];
  let outputBytes = 0;
  for (let i = 0; i < RUNS + 1; i++) {
    const { threadId } = await threads.create({ requestKey: `c${i}` });
    const start = performance.now();
    await threads.send({ threadId, requestKey: `s${i}`, input: { text: "go" } });
    const view = await threads.waitForIdle(threadId, { timeoutMs: 60_000 });
    if (i > 0) times.push(performance.now() - start); // the first run warms up (and loads the converter)
    const item = view.items.find((it) => it.kind === "tool");
    if (item?.tool?.status !== "completed") throw new Error(`tool ${item?.tool?.status}`);
    outputBytes = new TextEncoder().encode(item.tool.output ?? "").length;
  }
  await host.shutdown();
  times.sort((a, b) => a - b);
  return { ms: times[Math.floor(times.length / 2)], outputBytes };
}

const small = await median("/text");
const page = await median("/page");
server.close();
const runtime = "Deno" in globalThis ? "deno" : "Bun" in globalThis ? "bun" : "node";
console.log(JSON.stringify({
  runtime,
  runs: RUNS,
  textPage: { bytes: text.length, medianMs: +small.ms.toFixed(1) },
  htmlPage: { bytes: html.length, medianMs: +page.ms.toFixed(1), modelSawBytes: page.outputBytes },
}));
