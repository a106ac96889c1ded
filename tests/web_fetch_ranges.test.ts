// web_fetch refuses every non-public address range, whether a name resolves
// to it (injected resolver) or the URL is a literal in any spelling, before
// the transport is called. The test transport records any call, so a miss
// shows up as a failed assertion and no packet leaves the machine.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { webFetchTool } from "@floret/engine/web-fetch";
import { callTool } from "./support/run_tool.ts";
import { tableResolver, testTransport } from "./support/web_fetch_hooks.ts";

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
