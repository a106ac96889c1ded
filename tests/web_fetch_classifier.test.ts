// The address policy of web_fetch, table-driven: every range the tool must
// refuse, the public neighbours it must not refuse, and every notation.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { FloretError } from "@floret/engine";
import { type AddressRange, classifyAddress } from "@floret/engine/web-fetch";

const TABLE: [address: string, range: AddressRange, canonical?: string][] = [
  // loopback, in every IPv4 notation the URL parser knows
  ["127.0.0.1", "loopback"],
  ["127.255.255.254", "loopback"],
  ["127.1", "loopback", "127.0.0.1"],
  ["0177.0.0.1", "loopback", "127.0.0.1"],
  ["0x7f.1", "loopback", "127.0.0.1"],
  ["0x7F000001", "loopback", "127.0.0.1"],
  ["2130706433", "loopback", "127.0.0.1"],
  ["127.0.0.1.", "loopback", "127.0.0.1"],
  ["::1", "loopback"],
  ["[::1]", "loopback", "::1"],
  ["0:0:0:0:0:0:0:1", "loopback", "::1"],
  // unspecified and "this network"
  ["0.0.0.0", "unspecified"],
  ["0", "unspecified", "0.0.0.0"],
  ["0.1.2.3", "unspecified"],
  ["::", "unspecified"],
  // private
  ["10.0.0.1", "private"],
  ["10.255.255.255", "private"],
  ["012.1", "private", "10.0.0.1"],
  ["172.16.0.1", "private"],
  ["172.31.255.255", "private"],
  ["192.168.0.1", "private"],
  ["3232235777", "private", "192.168.1.1"],
  // link-local and metadata
  ["169.254.0.1", "link-local"],
  ["169.254.169.254", "cloud-metadata"],
  ["0xa9.0xfe.0xa9.0xfe", "cloud-metadata", "169.254.169.254"],
  ["2852039166", "cloud-metadata", "169.254.169.254"],
  ["fe80::1", "link-local"],
  ["fe80::1%eth0", "link-local", "fe80::1"],
  ["febf:ffff::1", "link-local"],
  // CGNAT (holds Alibaba's metadata address)
  ["100.64.0.1", "cgnat"],
  ["100.127.255.255", "cgnat"],
  ["100.100.100.200", "cgnat"],
  // unique-local (holds AWS's IPv6 metadata address)
  ["fc00::1", "unique-local"],
  ["fd00::1", "unique-local"],
  ["fd00:ec2::254", "unique-local"],
  // multicast and broadcast
  ["224.0.0.1", "multicast"],
  ["239.255.255.250", "multicast"],
  ["ff02::1", "multicast"],
  ["255.255.255.255", "broadcast"],
  // documentation, benchmarking, reserved
  ["192.0.2.1", "documentation"],
  ["198.51.100.7", "documentation"],
  ["203.0.113.9", "documentation"],
  ["2001:db8::1", "documentation"],
  ["3fff::1", "documentation"],
  ["198.18.0.1", "benchmarking"],
  ["198.19.255.255", "benchmarking"],
  ["2001:2::1", "benchmarking"],
  ["240.0.0.1", "reserved"],
  ["192.0.0.192", "reserved"],
  ["192.88.99.1", "reserved"],
  ["fec0::1", "reserved"],
  ["100::1", "reserved"],
  ["2001:0:4136:e378:8000:63bf:3fff:fdd2", "reserved"], // Teredo
  ["64:ff9b:1::a00:1", "reserved"], // local-use NAT64
  ["4000::1", "reserved"], // outside 2000::/3
  // IPv4 inside IPv6 is judged by the IPv4 address
  ["::ffff:127.0.0.1", "loopback", "::ffff:7f00:1"],
  ["::ffff:7f00:1", "loopback"],
  ["0:0:0:0:0:ffff:127.0.0.1", "loopback", "::ffff:7f00:1"],
  ["::ffff:10.0.0.1", "private", "::ffff:a00:1"],
  ["::ffff:169.254.169.254", "cloud-metadata", "::ffff:a9fe:a9fe"],
  ["::ffff:0:10.0.0.1", "private", "::ffff:0:a00:1"], // IPv4-translated
  ["::127.0.0.1", "loopback", "::7f00:1"], // IPv4-compatible (retired)
  ["::10.0.0.1", "private", "::a00:1"],
  ["::8.8.8.8", "reserved", "::808:808"], // retired form: refused even when public
  ["64:ff9b::127.0.0.1", "loopback", "64:ff9b::7f00:1"], // NAT64
  ["64:ff9b::a9fe:a9fe", "cloud-metadata"],
  ["2002:7f00:1::1", "loopback"], // 6to4
  ["2002:c0a8:101::", "private"],
  // public neighbours of the refused blocks
  ["8.8.8.8", "public"],
  ["1.1.1.1", "public"],
  ["9.255.255.255", "public"],
  ["11.0.0.0", "public"],
  ["100.63.255.255", "public"],
  ["100.128.0.0", "public"],
  ["126.255.255.255", "public"],
  ["128.0.0.0", "public"],
  ["169.253.255.255", "public"],
  ["172.15.255.255", "public"],
  ["172.32.0.0", "public"],
  ["192.167.255.255", "public"],
  ["192.169.0.0", "public"],
  ["198.17.255.255", "public"],
  ["198.20.0.0", "public"],
  ["223.255.255.255", "public"],
  ["2606:4700:4700::1111", "public"],
  ["2a00:1450:4001::200e", "public"],
  ["::ffff:8.8.8.8", "public", "::ffff:808:808"],
  ["64:ff9b::808:808", "public"],
  ["2002:808:808::1", "public"],
  ["fbff::1", "reserved"], // just below fc00::/7, outside 2000::/3 too
];

describe("classifyAddress", () => {
  for (const [address, range, canonical] of TABLE) {
    test(`${address} is ${range}`, () => {
      const verdict = classifyAddress(address);
      assert.equal(verdict.range, range);
      assert.equal(verdict.address, canonical ?? address);
    });
  }

  test("names the IPv4 address inside an IPv6 address", () => {
    assert.deepEqual(classifyAddress("::ffff:192.168.1.1").embedded, {
      form: "ipv4-mapped",
      ipv4: "192.168.1.1",
    });
    assert.deepEqual(classifyAddress("2002:a00:1::").embedded, { form: "6to4", ipv4: "10.0.0.1" });
    assert.deepEqual(classifyAddress("64:ff9b::a00:1").embedded, {
      form: "nat64",
      ipv4: "10.0.0.1",
    });
    assert.equal(classifyAddress("10.0.0.1").embedded, undefined);
  });

  for (const bad of ["", "example.com", "1.2.3.256", "::g", "1.2.3.4/8", "a@127.0.0.1", "[::1"]) {
    test(`refuses ${JSON.stringify(bad)} as not an address`, () => {
      assert.throws(
        () => classifyAddress(bad),
        (error) => error instanceof FloretError && error.code === "invalid_input",
      );
    });
  }
});
