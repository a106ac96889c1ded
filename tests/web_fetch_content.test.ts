// web_fetch content handling through its test hooks (web_fetch_site.ts): what
// each content type and status becomes for the model. No packet leaves the
// machine; the real transport is tested in web_fetch_transport.test.ts.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { callTool } from "./support/run_tool.ts";
import { PUBLIC_IP, SITE } from "./support/web_fetch_hooks.ts";
import { siteTool } from "./support/web_fetch_site.ts";

describe("content", () => {
  test("text passes through, with the URL and status on top", async () => {
    const { tool, transport } = siteTool();
    const result = await callTool(tool, { url: `http://${SITE}/text` });
    assert.equal(result.isError, false, result.output);
    assert.match(result.output, /^URL: http:\/\/site\.example\/text\nStatus: 200/);
    assert.match(result.output, /Content-Type: text\/plain\n\nhello from the site$/);
    assert.deepEqual(transport.calls, [{
      url: "http://site.example/text",
      method: "GET",
      address: PUBLIC_IP,
      port: 80,
    }]);
  });

  test("the charset of the Content-Type decodes the text", async () => {
    const { tool } = siteTool();
    const result = await callTool(tool, { url: `http://${SITE}/latin1` });
    assert.match(result.output, /\n\ncafé$/);
  });

  test("JSON is pretty-printed", async () => {
    const { tool } = siteTool();
    const result = await callTool(tool, { url: `http://${SITE}/json` });
    assert.equal(result.isError, false);
    assert.ok(
      result.output.endsWith('{\n  "name": "floret",\n  "tags": [\n    "a",\n    "b"\n  ]\n}'),
    );
  });

  test("+json types count as JSON; invalid JSON passes through as sent", async () => {
    const { tool } = siteTool();
    assert.ok(
      (await callTool(tool, { url: `http://${SITE}/problem` })).output.endsWith(
        '{\n  "title": "x"\n}',
      ),
    );
    assert.ok(
      (await callTool(tool, { url: `http://${SITE}/bad-json` })).output.endsWith("\n\n{not json"),
    );
  });

  test("HTML becomes Markdown, without scripts and styles", async () => {
    const { tool } = siteTool();
    const result = await callTool(tool, { url: `https://${SITE}/html` });
    assert.equal(result.isError, false, result.output);
    assert.match(result.output, /Content-Type: text\/html/);
    assert.match(result.output, /^# Web fetch works$/m);
    assert.match(
      result.output,
      /Some \*\*bold\*\* text and a \[link\]\(https:\/\/example\.org\/\)\./,
    );
    assert.match(result.output, /^-\s+first$/m);
    assert.doesNotMatch(result.output, /alert|color:red|<h1>|Floret/);
  });

  test("other content types are refused", async () => {
    const { tool } = siteTool();
    const png = await callTool(tool, { url: `http://${SITE}/png` });
    assert.equal(png.isError, true);
    assert.match(png.output, /^Content type image\/png is not supported/);
    const untyped = await callTool(tool, { url: `http://${SITE}/untyped` });
    assert.equal(untyped.isError, true);
    assert.match(untyped.output, /no Content-Type/);
  });

  test("an HTTP error status is an error result that still shows the body", async () => {
    const { tool } = siteTool();
    const result = await callTool(tool, { url: `http://${SITE}/missing` });
    assert.equal(result.isError, true);
    assert.match(result.output, /\nStatus: 404\b/);
    assert.match(result.output, /gone$/);
  });
});
