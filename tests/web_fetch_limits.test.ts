// web_fetch limits through its test hooks: the byte cap and the timeouts, on
// injected resolvers and transports (some that stall or never end). No
// packet leaves the machine.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { DEFAULT_WEB_FETCH_MAX_BYTES, webFetchTool } from "@floret/engine/web-fetch";
import { callTool } from "./support/run_tool.ts";
import { PUBLIC_IP, SITE, tableResolver, testTransport } from "./support/web_fetch_hooks.ts";
import { siteTool, typed } from "./support/web_fetch_site.ts";

describe("limits", () => {
  test("the body is cut at maxBytes and the model is told", async () => {
    const { tool } = siteTool({ maxBytes: 25 });
    const result = await callTool(tool, { url: `http://${SITE}/big` });
    assert.equal(result.isError, false);
    assert.match(result.output, /Note: the body was cut after 25 bytes/);
    assert.ok(result.output.endsWith("\n\n0123456789012345678901234"));
  });

  test("a body of exactly maxBytes is not cut", async () => {
    const { tool } = siteTool({ maxBytes: 19 });
    const result = await callTool(tool, { url: `http://${SITE}/text` });
    assert.doesNotMatch(result.output, /cut/);
    assert.ok(result.output.endsWith("\n\nhello from the site"));
  });

  test("reading stops at the limit: an endless body is cancelled", async () => {
    let pulls = 0;
    let cancelled = false;
    const endless = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulls++;
        controller.enqueue(new TextEncoder().encode("ab".repeat(512)));
      },
      cancel() {
        cancelled = true;
      },
    });
    const tool = webFetchTool({
      maxBytes: 4096,
      resolve: tableResolver({ [SITE]: [PUBLIC_IP] }).resolve,
      fetch: () => Promise.resolve(typed("text/plain", endless)),
    });
    const result = await callTool(tool, { url: `http://${SITE}/` });
    assert.match(result.output, /cut after 4096 bytes/);
    assert.equal(cancelled, true);
    assert.ok(pulls < 10, `pulled ${pulls} chunks`);
  });

  test("a cut inside a multi-byte character drops the partial character", async () => {
    const tool = webFetchTool({
      maxBytes: 4,
      resolve: tableResolver({ [SITE]: [PUBLIC_IP] }).resolve,
      fetch: () => Promise.resolve(typed("text/plain; charset=utf-8", "abcé and more")),
    });
    const result = await callTool(tool, { url: `http://${SITE}/` });
    assert.ok(result.output.endsWith("\n\nabc"), result.output);
  });

  test("a transport that never answers times out", async () => {
    const tool = webFetchTool({
      timeoutMs: 50,
      resolve: tableResolver({ [SITE]: [PUBLIC_IP] }).resolve,
      fetch: () => new Promise<Response>(() => {}),
    });
    const result = await callTool(tool, { url: `http://${SITE}/` });
    assert.equal(result.isError, true);
    assert.equal(result.output, `Timed out after 50 ms: http://${SITE}/`);
  });

  test("a resolver that never answers times out", async () => {
    const transport = testTransport();
    const tool = webFetchTool({
      timeoutMs: 50,
      resolve: () => new Promise<string[]>(() => {}),
      fetch: transport.fetch,
    });
    const result = await callTool(tool, { url: `http://${SITE}/` });
    assert.match(result.output, /^Timed out after 50 ms/);
    assert.deepEqual(transport.calls, []);
  });

  test("a body that stalls times out, and the transport sees the abort", async () => {
    let aborted = false;
    const tool = webFetchTool({
      timeoutMs: 80,
      resolve: tableResolver({ [SITE]: [PUBLIC_IP] }).resolve,
      fetch: (request) => {
        request.signal.addEventListener("abort", () => (aborted = true));
        const stalled = new ReadableStream<Uint8Array>({
          start(controller) {
            controller.enqueue(new TextEncoder().encode("partial"));
          },
        });
        return Promise.resolve(typed("text/plain", stalled));
      },
    });
    const result = await callTool(tool, { url: `http://${SITE}/` });
    assert.match(result.output, /^Timed out after 80 ms/);
    assert.equal(aborted, true);
  });

  test("the defaults are the documented ones", () => {
    assert.equal(DEFAULT_WEB_FETCH_MAX_BYTES, 2 * 1024 * 1024);
  });
});
