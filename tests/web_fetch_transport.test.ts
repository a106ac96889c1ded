// The real default transport (node:http / node:https) and resolver, on
// 127.0.0.1 only: the test-only switch lets loopback through, and the
// server counts what reached it.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { lookup } from "node:dns/promises";
import { webFetchTool } from "@floret/engine/web-fetch";
import { callTool } from "./support/run_tool.ts";
import { type LoopbackServer, startLoopbackServer, TEST_CERT } from "./support/web_fetch_server.ts";
import { loopbackAllowed, tableResolver } from "./support/web_fetch_hooks.ts";
import { skipBecause } from "./support/skip.ts";

let plain: LoopbackServer;
let secure: LoopbackServer;
before(async () => {
  plain = await startLoopbackServer();
  secure = await startLoopbackServer(true);
});
after(async () => {
  await plain.close();
  await secure.close();
});

/** Waits until the server has seen the client hang up on `path`. */
async function hangupOf(server: LoopbackServer, path: string): Promise<void> {
  for (let i = 0; i < 5000 && !server.hangups.includes(path); i++) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  assert.ok(server.hangups.includes(path), `the client kept ${path} open`);
}

describe("http on 127.0.0.1", () => {
  test("fetches text, and the server sees one GET", async () => {
    const before = plain.hits.length;
    const result = await callTool(webFetchTool(loopbackAllowed()), {
      url: `http://127.0.0.1:${plain.port}/text`,
    });
    assert.equal(result.isError, false, result.output);
    assert.match(result.output, /\n\nplain loopback text$/);
    assert.deepEqual(plain.hits.slice(before), ["/text"]);
  });

  test("connects to the resolved address and sends the name as Host", async () => {
    const { resolve } = tableResolver({ "app.example": ["127.0.0.1"] });
    const result = await callTool(webFetchTool(loopbackAllowed({ resolve })), {
      url: `http://app.example:${plain.port}/echo?q=1`,
    });
    assert.equal(result.isError, false, result.output);
    const echo = JSON.parse(result.output.slice(result.output.indexOf("\n\n") + 2));
    assert.deepEqual(echo, { method: "GET", host: `app.example:${plain.port}`, url: "/echo?q=1" });
  });

  test("HTML becomes Markdown", async () => {
    const result = await callTool(webFetchTool(loopbackAllowed()), {
      url: `http://127.0.0.1:${plain.port}/html`,
    });
    assert.match(result.output, /^# Web fetch works$/m);
  });

  test("follows a redirect, checking the new hop", async () => {
    const result = await callTool(webFetchTool(loopbackAllowed()), {
      url: `http://127.0.0.1:${plain.port}/redirect?to=/json`,
    });
    assert.equal(result.isError, false, result.output);
    assert.match(result.output, /Redirected from: http:\/\/127\.0\.0\.1:\d+\/redirect\?to=\/json/);
    assert.ok(result.output.includes('"b": [\n    true,\n    null\n  ]'), result.output);
  });

  test("still refuses private ranges with loopback allowed", async () => {
    const before = plain.hits.length;
    const result = await callTool(webFetchTool(loopbackAllowed()), {
      url: `http://127.0.0.1:${plain.port}/redirect?to=http://10.0.0.1/`,
    });
    assert.equal(result.isError, true);
    assert.match(result.output, /Refused: 10\.0\.0\.1 is a private-network address/);
    assert.deepEqual(plain.hits.slice(before), ["/redirect"]);
  });

  test("decodes gzip sent although identity was asked for", async () => {
    const result = await callTool(webFetchTool(loopbackAllowed()), {
      url: `http://127.0.0.1:${plain.port}/gzip`,
    });
    assert.equal(result.isError, false, result.output);
    assert.match(result.output, /\n\ncompressed loopback text$/);
  });

  test("stops reading at maxBytes and closes the connection", async () => {
    const result = await callTool(webFetchTool(loopbackAllowed({ maxBytes: 20_000 })), {
      url: `http://127.0.0.1:${plain.port}/endless`,
    });
    assert.equal(result.isError, false, result.output);
    assert.match(result.output, /the body was cut after 20000 bytes/);
    assert.ok(result.output.endsWith(`\n\n${"x".repeat(20_000)}`));
    await hangupOf(plain, "/endless");
  });

  test("times out on a stalled body and closes the connection", async () => {
    const result = await callTool(webFetchTool(loopbackAllowed({ timeoutMs: 300 })), {
      url: `http://127.0.0.1:${plain.port}/stall`,
    });
    assert.equal(result.isError, true);
    assert.match(result.output, /^Timed out after 300 ms/);
    await hangupOf(plain, "/stall");
  });

  test("a closed port is an error result", async () => {
    const probe = await startLoopbackServer();
    const port = probe.port;
    await probe.close();
    const result = await callTool(webFetchTool(loopbackAllowed()), {
      url: `http://127.0.0.1:${port}/`,
    });
    assert.equal(result.isError, true);
    assert.match(result.output, /^Could not fetch http:\/\/127\.0\.0\.1:\d+\/: /);
  });

  test("the system resolver is used when no resolver is given", async (t) => {
    const answers = await lookup("localhost", { all: true, verbatim: true });
    if (answers[0]?.address !== "127.0.0.1") {
      const reason = "localhost does not resolve to 127.0.0.1 first here";
      skipBecause(import.meta.url, reason);
      t.skip(reason);
      return;
    }
    const result = await callTool(webFetchTool(loopbackAllowed()), {
      url: `http://localhost:${plain.port}/echo`,
    });
    assert.equal(result.isError, false, result.output);
    assert.match(result.output, new RegExp(`"host": "localhost:${plain.port}"`));
  });
});

describe("https on 127.0.0.1", () => {
  test("verifies the certificate against the URL's name, sent as SNI and Host", async () => {
    const { resolve } = tableResolver({ "example.test": ["127.0.0.1"] });
    const before = secure.seen.length;
    const result = await callTool(webFetchTool(loopbackAllowed({ resolve }, TEST_CERT)), {
      url: `https://example.test:${secure.port}/text`,
    });
    assert.equal(result.isError, false, result.output);
    assert.match(result.output, /\n\nplain loopback text$/);
    assert.deepEqual(secure.seen.slice(before), [{
      host: `example.test:${secure.port}`,
      servername: "example.test",
    }]);
  });

  test("a certificate for another name is refused", async () => {
    const { resolve } = tableResolver({ "other.test": ["127.0.0.1"] });
    const result = await callTool(webFetchTool(loopbackAllowed({ resolve }, TEST_CERT)), {
      url: `https://other.test:${secure.port}/text`,
    });
    assert.equal(result.isError, true);
    assert.match(
      result.output,
      /^Could not fetch https:\/\/other\.test:\d+\/text: .*(altnames|ALTNAME)/,
    );
  });

  test("an untrusted certificate is refused", async () => {
    const { resolve } = tableResolver({ "example.test": ["127.0.0.1"] });
    const result = await callTool(webFetchTool(loopbackAllowed({ resolve })), {
      url: `https://example.test:${secure.port}/text`,
    });
    assert.equal(result.isError, true);
    assert.match(result.output, /self.signed|SELF_SIGNED/);
  });
});
