// web_fetch through its test hooks: an in-memory "public" site behind an
// injected resolver and transport, so no packet leaves the machine. The
// real transport is tested on 127.0.0.1 in web_fetch_transport.test.ts.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import type * as Contract from "../../shared/api/public-api.d.ts";
import { FloretError } from "@floret/engine";
import {
  DEFAULT_WEB_FETCH_MAX_BYTES,
  type WebFetchOptions,
  webFetchTool,
} from "@floret/engine/web-fetch";
import { engine, sendAndWait } from "./support/engine.ts";
import { callTool } from "./support/run_tool.ts";
import { HTML_PAGE } from "./support/web_fetch_server.ts";
import { PUBLIC_IP, SITE, tableResolver, testTransport } from "./support/web_fetch_hooks.ts";

const typed = (type: string, body: BodyInit | null, status = 200): Response =>
  new Response(body, { status, headers: type ? { "content-type": type } : {} });

const ROUTES = {
  "/text": () => typed("text/plain; charset=utf-8", "hello from the site"),
  "/latin1": () =>
    typed("text/plain; charset=iso-8859-1", new Uint8Array([0x63, 0x61, 0x66, 0xe9])),
  "/json": () => typed("application/json", '{"name":"floret","tags":["a","b"]}'),
  "/problem": () => typed("application/problem+json", '{"title":"x"}'),
  "/bad-json": () => typed("application/json", "{not json"),
  "/html": () => typed("text/html; charset=utf-8", HTML_PAGE),
  "/png": () => typed("image/png", new Uint8Array([0x89, 0x50, 0x4e, 0x47])),
  "/untyped": () => typed("", new TextEncoder().encode("what am I")),
  "/missing": () => typed("text/plain", "gone", 404),
  "/old": () => new Response(null, { status: 301, headers: { location: "/text" } }),
  "/loop": () => new Response(null, { status: 302, headers: { location: "/loop" } }),
  "/see-other": () =>
    new Response(null, { status: 303, headers: { location: `http://other.example:8080/json` } }),
  "/big": () => typed("text/plain", "0123456789".repeat(1000)),
};

/** A tool on the in-memory site, with its hooks for assertions. */
function siteTool(options: Omit<WebFetchOptions, "resolve" | "fetch"> = {}) {
  const transport = testTransport(ROUTES);
  const resolver = tableResolver({ [SITE]: [PUBLIC_IP], "other.example": [PUBLIC_IP] });
  const tool = webFetchTool({ ...options, resolve: resolver.resolve, fetch: transport.fetch });
  return { tool, transport, resolver };
}

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

describe("other ranges never reach the transport", () => {
  const refused: [string, RegExp][] = [
    ["10.1.2.3", /private-network/],
    ["172.16.0.1", /private-network/],
    ["192.168.1.1", /private-network/],
    ["169.254.169.254", /cloud metadata/],
    ["169.254.10.10", /link-local/],
    ["100.64.0.1", /carrier-grade NAT/],
    ["100.100.100.200", /carrier-grade NAT/],
    ["224.0.0.251", /multicast/],
    ["255.255.255.255", /broadcast/],
    ["0.0.0.0", /unspecified/],
    ["192.0.2.10", /documentation/],
    ["198.18.0.1", /benchmarking/],
    ["240.0.0.1", /reserved/],
    ["fd00::1", /unique-local/],
    ["fd00:ec2::254", /unique-local/],
    ["fe80::1", /link-local/],
    ["fe80::1%eth0", /link-local/],
    ["ff02::1", /multicast/],
    ["::ffff:10.0.0.1", /ipv4-mapped IPv6 carrying 10\.0\.0\.1, a private-network/],
    ["::ffff:169.254.169.254", /ipv4-mapped IPv6 carrying 169\.254\.169\.254, the cloud metadata/],
    ["::ffff:0:192.168.0.1", /ipv4-translated/],
    ["::10.0.0.1", /ipv4-compatible/],
    ["64:ff9b::a00:1", /nat64 IPv6 carrying 10\.0\.0\.1/],
    ["2002:a9fe:a9fe::1", /6to4 IPv6 carrying 169\.254\.169\.254/],
    ["2001:db8::1", /documentation/],
    ["2001:0:4136:e378:8000:63bf:3fff:fdd2", /reserved/],
  ];
  for (const [address, reason] of refused) {
    test(`a name resolving to ${address}`, async () => {
      const transport = testTransport();
      const tool = webFetchTool({
        resolve: tableResolver({ "inside.example": [address] }).resolve,
        fetch: transport.fetch,
      });
      const result = await callTool(tool, { url: "http://inside.example/" });
      assert.equal(result.isError, true);
      assert.match(result.output, /^Refused: inside\.example resolves to /);
      assert.match(result.output, reason);
      assert.deepEqual(transport.calls, []);
    });
  }

  const literals = [
    "http://10.1.2.3/",
    "http://012.1.2.3/",
    "http://0xa.0x1.0x2.0x3/",
    "http://167838211/",
    "http://172.16.1/",
    "http://192.168.257/",
    "http://169.254.169.254/latest/meta-data/",
    "http://0xa9fea9fe/",
    "http://2852039166/",
    "http://0251.0376.0251.0376/",
    "http://100.64.1.1/",
    "http://[fd12:3456::1]/",
    "http://[fe80::abcd]/",
    "http://[::ffff:a9fe:a9fe]/",
    "http://[::ffff:192.168.0.1]:8080/",
    "http://[64:ff9b::192.168.0.1]/",
    "http://[2002:c0a8:1::]/",
    "http://[ff05::2]/",
    "https://224.0.0.1/",
    "http://0300.0250.0.1/",
    "http://3232235521/",
    "http://0xc0a80001/",
    "http://[::ffff:100.64.0.1]/",
    "http://[fd00:ec2::254]/",
    "http://[fec0::1]/",
    "http:/\\169.254.169.254/",
    "http://10.0.0.1\\@site.example/",
  ];
  for (const url of literals) {
    test(`the literal ${url}`, async () => {
      const transport = testTransport();
      const result = await callTool(webFetchTool({ fetch: transport.fetch }), { url });
      assert.equal(result.isError, true);
      assert.match(result.output, /^Refused: .* only public addresses can be fetched$/);
      assert.deepEqual(transport.calls, []);
    });
  }
});

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
