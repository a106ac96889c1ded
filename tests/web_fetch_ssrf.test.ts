// SSRF: every way to point web_fetch at the loopback test server must end in
// an error result and zero hits. Nothing here can send a packet off the
// machine: the real transport only ever gets loopback answers, and every
// other case uses a transport that refuses anything but loopback.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { webFetchTool } from "@floret/engine/web-fetch";
import { callTool } from "./support/run_tool.ts";
import { type LoopbackServer, startLoopbackServer } from "./support/web_fetch_server.ts";
import { PUBLIC_IP, SITE, tableResolver, testTransport } from "./support/web_fetch_hooks.ts";

let server: LoopbackServer;
before(async () => {
  server = await startLoopbackServer();
});
after(async () => {
  await server.close();
});

function assertRefused(result: { output: string; isError: boolean }, pattern: RegExp): void {
  assert.equal(result.isError, true, result.output);
  assert.match(result.output, pattern);
  assert.deepEqual(server.hits, [], "the loopback server was reached");
}

describe("literal loopback URLs, real transport", () => {
  const notations = [
    "127.0.0.1",
    "127.1",
    "127.0.1",
    "0177.0.0.1",
    "0177.1",
    "0x7f.1",
    "0x7f.0.0.1",
    "0x7F000001",
    "2130706433",
    "017700000001",
    "127.0.0.1.",
    "%31%32%37.0.0.1",
    "127.255.255.254",
    "0",
    "0.0.0.0",
    "[::1]",
    "[0:0:0:0:0:0:0:1]",
    "[::ffff:127.0.0.1]",
    "[::ffff:7f00:1]",
    "[::ffff:0:127.0.0.1]",
    "[::127.0.0.1]",
    "[64:ff9b::127.0.0.1]",
    "[2002:7f00:1::]",
    "[::]",
    "localhost",
    "LOCALHOST",
    "localhost.",
    "api.localhost",
    // Padded octal, full-width digits and ideographic dots: the URL parser folds them to 127.0.0.1.
    "127.000.000.001",
    "00000177.1",
    "0x7f.0x0.0x0.0x1",
    "１２７.０.０.１",
    "127。0。0。1",
    "[::ffff:0.0.0.0]",
    "[0000:0000:0000:0000:0000:0000:0000:0001]",
  ];
  for (const host of notations) {
    test(`http://${host}:PORT/ is refused`, async () => {
      const result = await callTool(webFetchTool(), { url: `http://${host}:${server.port}/text` });
      assertRefused(result, /^Refused: /);
    });
  }

  test("an IPv6 zone id makes the URL invalid, and nothing is sent", async () => {
    const result = await callTool(webFetchTool(), { url: `http://[fe80::1%25lo]:${server.port}/` });
    assertRefused(result, /Not a valid absolute URL/);
  });

  test("https to loopback is refused too", async () => {
    const result = await callTool(webFetchTool(), { url: `https://127.0.0.1:${server.port}/` });
    assertRefused(result, /^Refused: 127\.0\.0\.1 is a loopback address/);
  });
});

describe("names that resolve to loopback, real transport", () => {
  const answers: [string, string[]][] = [
    ["127.0.0.1", ["127.0.0.1"]],
    ["::1", ["::1"]],
    ["::ffff:127.0.0.1", ["::ffff:127.0.0.1"]],
    ["a loopback address in octal", ["0177.0.0.1"]],
    ["a loopback address as one number", ["2130706433"]],
    ["0.0.0.0", ["0.0.0.0"]],
    ["two loopback addresses", ["127.0.0.2", "::1"]],
  ];
  for (const [label, addresses] of answers) {
    test(`a resolver answering ${label}`, async () => {
      const { resolve, asked } = tableResolver({ "internal.example": addresses });
      const result = await callTool(webFetchTool({ resolve }), {
        url: `http://internal.example:${server.port}/text`,
      });
      assertRefused(result, /^Refused: internal\.example resolves to /);
      assert.deepEqual(asked, ["internal.example"]);
    });
  }
});

describe("one bad answer among public ones", () => {
  test("a name answering a public and a loopback address is refused whole", async () => {
    const transport = testTransport({}, server);
    const { resolve } = tableResolver({ "mixed.example": [PUBLIC_IP, "127.0.0.1"] });
    const result = await callTool(webFetchTool({ resolve, fetch: transport.fetch }), {
      url: `http://mixed.example:${server.port}/text`,
    });
    assertRefused(result, /resolves to 127\.0\.0\.1, a loopback address/);
    assert.deepEqual(transport.calls, []);
  });
});

describe("redirects from an allowed-looking host", () => {
  const targets: [label: string, location: (port: number) => string][] = [
    ["127.0.0.1", (port) => `http://127.0.0.1:${port}/text`],
    ["decimal", (port) => `http://2130706433:${port}/text`],
    ["protocol-relative short form", (port) => `//127.1:${port}/text`],
    ["IPv4-mapped IPv6", (port) => `http://[::ffff:127.0.0.1]:${port}/text`],
    ["localhost", (port) => `http://localhost:${port}/text`],
    ["a name resolving to loopback", (port) => `http://internal.example:${port}/text`],
    ["https to loopback", (port) => `https://127.0.0.1:${port}/text`],
    ["the metadata address", () => "http://169.254.169.254/latest/meta-data/"],
    ["a private address", () => "http://10.0.0.1/"],
    ["a file URL", () => "file:///etc/passwd"],
  ];
  for (const [label, location] of targets) {
    test(`a redirect to ${label} is refused`, async () => {
      const transport = testTransport({
        "/go": () =>
          new Response(null, { status: 302, headers: { location: location(server.port) } }),
      }, server);
      const { resolve } = tableResolver({ [SITE]: [PUBLIC_IP], "internal.example": ["127.0.0.1"] });
      const result = await callTool(webFetchTool({ resolve, fetch: transport.fetch }), {
        url: `http://${SITE}/go`,
      });
      assertRefused(result, /^After a redirect from http:\/\/site\.example\/go: /);
      assert.equal(transport.calls.length, 1, "only the first hop was sent");
      assert.deepEqual(transport.violations, []);
    });
  }

  test("a refused hop deep in a chain of redirects", async () => {
    const transport = testTransport({
      "/a": () => new Response(null, { status: 301, headers: { location: "/b" } }),
      "/b": () => new Response(null, { status: 307, headers: { location: `http://${SITE}/c` } }),
      "/c": () =>
        new Response(null, {
          status: 308,
          headers: { location: `http://127.0.0.1:${server.port}/text` },
        }),
    }, server);
    const { resolve } = tableResolver({ [SITE]: [PUBLIC_IP] });
    const result = await callTool(webFetchTool({ resolve, fetch: transport.fetch }), {
      url: `http://${SITE}/a`,
    });
    assertRefused(
      result,
      /^After a redirect from http:\/\/site\.example\/c: Refused: 127\.0\.0\.1/,
    );
    assert.deepEqual(transport.calls.map((c) => new URL(c.url).pathname), ["/a", "/b", "/c"]);
  });
});

describe("the hit counter works", () => {
  // Without this, zero hits above could mean a broken server rather than a working guard.
  test("the forwarding transport does reach the server when the guard lets it", async () => {
    const transport = testTransport({}, server);
    const count = server.hits.length;
    const response = await transport.fetch(new Request(`http://127.0.0.1:${server.port}/text`), {
      address: "127.0.0.1",
      port: server.port,
    });
    assert.equal(await response.text(), "plain loopback text");
    assert.equal(server.hits.length, count + 1);
    server.hits.length = 0;
  });
});
