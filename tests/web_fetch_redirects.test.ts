// web_fetch redirects through its test hooks (web_fetch_site.ts): each hop is
// resolved and checked, and the count is capped. No packet leaves the machine.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { callTool } from "./support/run_tool.ts";
import { PUBLIC_IP, SITE } from "./support/web_fetch_hooks.ts";
import { siteTool } from "./support/web_fetch_site.ts";

describe("redirects", () => {
  test("are followed, each hop resolved and checked once", async () => {
    const { tool, transport, resolver } = siteTool();
    const result = await callTool(tool, { url: `http://${SITE}/old` });
    assert.equal(result.isError, false, result.output);
    assert.match(result.output, /^URL: http:\/\/site\.example\/text\n/);
    assert.match(result.output, /Redirected from: http:\/\/site\.example\/old/);
    assert.deepEqual(transport.calls.map((c) => c.url), [
      "http://site.example/old",
      "http://site.example/text",
    ]);
    assert.deepEqual(resolver.asked, [SITE, SITE]);
  });

  test("a 303 to another host and port goes there with GET", async () => {
    const { tool, transport } = siteTool();
    const result = await callTool(tool, { url: `http://${SITE}/see-other` });
    assert.equal(result.isError, false, result.output);
    assert.deepEqual(transport.calls[1], {
      url: "http://other.example:8080/json",
      method: "GET",
      address: PUBLIC_IP,
      port: 8080,
    });
  });

  test("stop after maxRedirects", async () => {
    const { tool, transport } = siteTool({ maxRedirects: 3 });
    const result = await callTool(tool, { url: `http://${SITE}/loop` });
    assert.equal(result.isError, true);
    assert.match(result.output, /^Too many redirects \(more than 3\)/);
    assert.equal(transport.calls.length, 4);
  });

  test("maxRedirects 0 refuses the first redirect", async () => {
    const { tool, transport } = siteTool({ maxRedirects: 0 });
    const result = await callTool(tool, { url: `http://${SITE}/old` });
    assert.match(result.output, /^Too many redirects \(more than 0\)/);
    assert.equal(transport.calls.length, 1);
  });
});
