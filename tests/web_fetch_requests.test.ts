// What web_fetch sends, and what it refuses before sending: GET only, the
// request and target the transport gets, URLs that are not http(s), and
// resolver and transport failures. Through the test hooks, so no packet
// leaves the machine.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { webFetchTool } from "@floret/engine/web-fetch";
import { callTool } from "./support/run_tool.ts";
import { PUBLIC_IP, SITE, tableResolver, testTransport } from "./support/web_fetch_hooks.ts";
import { siteTool, typed } from "./support/web_fetch_site.ts";

describe("requests", () => {
  test("only GET: a call asking for another method or a body is an error result and sends nothing", async () => {
    for (const extra of [{ method: "POST" }, { method: "delete" }, { method: 1 }, { body: "x" }]) {
      const { tool, transport } = siteTool();
      const result = await callTool(tool, { url: `http://${SITE}/text`, ...extra });
      assert.equal(result.isError, true, result.output);
      assert.match(result.output, /only sends GET requests/);
      assert.deepEqual(transport.calls, []);
    }
  });

  test("only GET: method GET (any case) and other extra arguments change nothing", async () => {
    const { tool, transport } = siteTool();
    for (const method of ["GET", "get", undefined]) {
      const result = await callTool(tool, {
        url: `http://${SITE}/text`,
        method,
        headers: { "x-a": "1" },
      });
      assert.equal(result.isError, false, result.output);
    }
    assert.deepEqual(transport.calls.map((c) => c.method), ["GET", "GET", "GET"]);
  });

  test("the transport gets the request with redirects off and the checked address", async () => {
    let seen: { redirect: string; host: string; accept: string | null } | undefined;
    const tool = webFetchTool({
      resolve: tableResolver({ [SITE]: [PUBLIC_IP, "2606:4700::1"] }).resolve,
      fetch: (request, target) => {
        seen = {
          redirect: request.redirect,
          host: `${new URL(request.url).host} -> ${target.address}:${target.port}`,
          accept: request.headers.get("accept"),
        };
        return Promise.resolve(typed("text/plain", "ok"));
      },
    });
    await callTool(tool, { url: `https://${SITE.toUpperCase()}:8443/a?b=c#frag` });
    assert.equal(seen?.redirect, "manual");
    assert.equal(seen?.host, `site.example:8443 -> ${PUBLIC_IP}:8443`);
    assert.match(seen?.accept ?? "", /text\/html/);
  });

  for (
    const [label, url, reason] of [
      ["file", "file:///etc/passwd", /^Only http and https URLs can be fetched, not file:/],
      ["ftp", "ftp://site.example/x", /not ftp:/],
      ["data", "data:text/plain,hello", /not data:/],
      ["javascript", "javascript:alert(1)", /not javascript:/],
      ["a relative URL", "/etc/passwd", /^Not a valid absolute URL/],
      ["credentials", "http://user:secret@site.example/", /user name or password/],
      ["an empty host", "http://:80/path", /^Not a valid absolute URL/],
      ["a bad IPv4 literal", "http://1.2.3.256/", /^Not a valid absolute URL/],
    ] as [string, string, RegExp][]
  ) {
    test(`refuses ${label}`, async () => {
      const { tool, transport, resolver } = siteTool();
      const result = await callTool(tool, { url });
      assert.equal(result.isError, true);
      assert.match(result.output, reason);
      assert.deepEqual(transport.calls, []);
      assert.deepEqual(resolver.asked, []);
    });
  }

  test("a resolver failure or an empty answer is an error result", async () => {
    const transport = testTransport();
    const tool = webFetchTool({
      resolve: tableResolver({ "empty.example": [] }).resolve,
      fetch: transport.fetch,
    });
    assert.match(
      (await callTool(tool, { url: "http://nowhere.example/" })).output,
      /^Could not resolve nowhere\.example: no such name/,
    );
    assert.match(
      (await callTool(tool, { url: "http://empty.example/" })).output,
      /^Could not resolve empty\.example: no addresses/,
    );
    assert.deepEqual(transport.calls, []);
  });

  test("a resolver answering something that is not an address is refused", async () => {
    const transport = testTransport();
    const tool = webFetchTool({
      resolve: () => Promise.resolve(["evil.example"]),
      fetch: transport.fetch,
    });
    const result = await callTool(tool, { url: "http://odd.example/" });
    assert.match(result.output, /the resolver answered evil\.example/);
    assert.deepEqual(transport.calls, []);
  });

  test("a transport that throws is an error result", async () => {
    const tool = webFetchTool({
      resolve: tableResolver({ [SITE]: [PUBLIC_IP] }).resolve,
      fetch: () =>
        Promise.reject(Object.assign(new Error("connect failed"), { code: "ECONNREFUSED" })),
    });
    const result = await callTool(tool, { url: `http://${SITE}/` });
    assert.equal(result.isError, true);
    assert.equal(result.output, `Could not fetch http://${SITE}/: connect failed (ECONNREFUSED)`);
  });
});
