// web_fetch stays fair (DESIGN §11): no page holds the event loop (HTML is
// converted in bounded slices), the fetch's time limit covers the conversion,
// and platform-internal addresses that are publicly routed are refused. Every
// request goes to an injected transport: no packet leaves the machine.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { webFetchTool } from "@floret/engine/web-fetch";
import { callTool } from "./support/run_tool.ts";
import { PUBLIC_IP, SITE, tableResolver } from "./support/web_fetch_hooks.ts";
import { typed } from "./support/web_fetch_site.ts";

/** A tool whose one site answers `html`. */
function htmlTool(html: string, timeoutMs?: number) {
  return webFetchTool({
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
    maxBytes: 8 * 1024 * 1024,
    resolve: tableResolver({ [SITE]: [PUBLIC_IP] }).resolve,
    fetch: () => Promise.resolve(typed("text/html; charset=utf-8", html)),
  });
}

/** Runs `work` while a 5 ms interval ticks; returns its result and the longest gap between ticks. */
async function withTicker<T>(work: () => Promise<T>): Promise<{ result: T; longestGapMs: number }> {
  let last = Date.now();
  let longest = 0;
  const ticker = setInterval(() => {
    const now = Date.now();
    longest = Math.max(longest, now - last);
    last = now;
  }, 5);
  try {
    const result = await work();
    longest = Math.max(longest, Date.now() - last);
    return { result, longestGapMs: longest };
  } finally {
    clearInterval(ticker);
  }
}

describe("HTML conversion never holds the event loop", () => {
  test("deeply nested markup is converted in slices, flattened past the depth limit", async () => {
    const depth = 20_000;
    const html = `<html><body>${"<div>".repeat(depth)}<p>deep text</p>${"</div>".repeat(depth)}` +
      `<p>after the nest</p></body></html>`;
    const { result, longestGapMs } = await withTicker(() =>
      callTool(htmlTool(html), { url: `http://${SITE}/` })
    );
    assert.equal(result.isError, false);
    assert.match(result.output, /deep text/);
    assert.match(result.output, /after the nest/);
    // Unsliced, this page held the loop for seconds; a slice is a few ms (generous on a loaded machine).
    assert.ok(longestGapMs < 2_000, `the event loop was held for ${longestGapMs} ms`);
  });

  test("a large page keeps timers running and is converted whole within its limits", async () => {
    const rows = Array.from(
      { length: 20_000 },
      (_, i) => `<li><a href="/p${i}">item ${i}</a></li>`,
    );
    const html = `<html><head><script>${"var x = '<div>';".repeat(5_000)}</script></head>` +
      `<body><h1>Title</h1><ul>${rows.join("")}</ul><p>the end</p></body></html>`;
    const { result, longestGapMs } = await withTicker(() =>
      callTool(htmlTool(html), { url: `http://${SITE}/` })
    );
    assert.equal(result.isError, false);
    assert.match(result.output, /# Title/);
    assert.match(result.output, /the end/);
    assert.doesNotMatch(result.output, /var x/);
    assert.ok(longestGapMs < 2_000, `the event loop was held for ${longestGapMs} ms`);
  });

  test("the time limit covers the conversion: past it the model gets shortened text and a note", async () => {
    const rows = Array.from({ length: 200_000 }, (_, i) => `<p>paragraph ${i}</p>`);
    const html = `<html><body>${rows.join("")}</body></html>`;
    const result = await callTool(htmlTool(html, 300), { url: `http://${SITE}/` });
    assert.match(result.output, /Note: the conversion to Markdown ran out of time/);
    assert.match(result.output, /paragraph 0/);
    assert.doesNotMatch(result.output, /paragraph 199999/);
  });
});

describe("platform-internal addresses", () => {
  for (
    const address of ["168.63.129.16", "100.100.100.200", "fd00:ec2::254", "::ffff:168.63.129.16"]
  ) {
    test(`${address} is refused, and nothing is sent`, async () => {
      let sent = 0;
      const tool = webFetchTool({
        resolve: tableResolver({ [SITE]: [address] }).resolve,
        fetch: () => {
          sent++;
          return Promise.resolve(typed("text/plain", "should not be fetched"));
        },
      });
      const byName = await callTool(tool, { url: `http://${SITE}/` });
      assert.equal(byName.isError, true);
      const literal = address.includes(":") ? `[${address}]` : address;
      const byAddress = await callTool(tool, { url: `http://${literal}/` });
      assert.equal(byAddress.isError, true);
      assert.equal(sent, 0);
    });
  }
});
