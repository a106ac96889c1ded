// web_fetch as a tool: its options and contract, and a turn through the
// engine on the in-memory site (web_fetch_site.ts). The other concerns have
// their own files: web_fetch_content, _redirects, _limits, _requests,
// _ranges (all on test hooks), and web_fetch_transport (127.0.0.1).
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import type * as Contract from "./contract/public-api.d.ts";
import { FloretError } from "@floret/engine";
import { type WebFetchOptions, webFetchTool } from "@floret/engine/web-fetch";
import { engine, sendAndWait } from "./support/engine.ts";
import { PUBLIC_IP, SITE, tableResolver, testTransport } from "./support/web_fetch_hooks.ts";
import { ROUTES } from "./support/web_fetch_site.ts";

// Fails type-checking if the entry drifts from the public contract.
const contract: typeof Contract.webFetchTool = webFetchTool;

describe("options", () => {
  test("webFetchTool matches the contract's declaration", () => {
    assert.equal(contract, webFetchTool);
  });

  test("the tool is web_fetch, effect read, input { url }", () => {
    const tool = webFetchTool();
    assert.equal(tool.name, "web_fetch");
    assert.equal(tool.effect, "read");
  });

  const bad: [string, unknown][] = [
    ["null options", null],
    ["a string", "fast"],
    ["timeoutMs 0", { timeoutMs: 0 }],
    ["timeoutMs NaN", { timeoutMs: Number.NaN }],
    ["timeoutMs Infinity", { timeoutMs: Infinity }],
    ["timeoutMs as text", { timeoutMs: "100" }],
    ["maxBytes 0", { maxBytes: 0 }],
    ["maxBytes 1.5", { maxBytes: 1.5 }],
    ["maxRedirects -1", { maxRedirects: -1 }],
    ["resolve not a function", { resolve: "dns" }],
    ["fetch not a function", { fetch: {} }],
  ];
  for (const [label, options] of bad) {
    test(`${label} is invalid_input`, () => {
      assert.throws(
        () => webFetchTool(options as WebFetchOptions),
        (error) => error instanceof FloretError && error.code === "invalid_input",
      );
    });
  }
});

describe("through the engine", () => {
  test("the model reads the fetched Markdown; a refused URL is an error result and the turn goes on", async () => {
    const transport = testTransport(ROUTES);
    const tool = webFetchTool({
      resolve: tableResolver({ [SITE]: [PUBLIC_IP], "router.example": ["192.168.0.1"] }).resolve,
      fetch: transport.fetch,
    });
    const e = await engine([
      { toolCalls: [{ name: "web_fetch", arguments: { url: `https://${SITE}/html` } }] },
      { toolCalls: [{ name: "web_fetch", arguments: { url: "http://router.example/admin" } }] },
      { text: "The page says web fetch works; the router is off limits." },
    ], { tools: [tool] });
    try {
      const view = await sendAndWait(e, "Read the page, then the router.");
      assert.equal(view.turns.at(-1)?.outcome, "completed");
      const toolMessages = (i: number) =>
        e.gateway.requests[i].messages.filter((m) => m.role === "tool");
      const first = toolMessages(1);
      assert.equal(first.length, 1);
      assert.ok(first[0].role === "tool" && !first[0].isError);
      assert.match(first[0].role === "tool" ? first[0].output : "", /^# Web fetch works$/m);
      const second = toolMessages(2).at(-1)!;
      assert.ok(second.role === "tool" && second.isError === true);
      assert.match(
        second.role === "tool" ? second.output : "",
        /^Refused: router\.example resolves to 192\.168\.0\.1, a private-network address/,
      );
      assert.deepEqual(transport.calls.map((c) => c.url), [`https://${SITE}/html`]);
      assert.deepEqual(transport.violations, []);
      const tools = view.items.filter((item) => item.kind === "tool");
      assert.equal(tools.length, 2);
      assert.ok(e.gateway.requests[0].tools.some((t) => t.name === "web_fetch"));
    } finally {
      await e.host.shutdown();
    }
  });
});
