/**
 * Which addresses web_fetch may connect to. Everything that reaches the
 * machine itself, its networks or special-purpose infrastructure is refused;
 * what is left is the public internet.
 *
 * @module
 */
import { FloretError } from "../../errors.ts";
import { formatIpAddress, type IpAddress, parseIpAddress } from "./ip_address.ts";

/** The kind of network an address belongs to; only `public` may be fetched. */
export type AddressRange =
  | "public"
  | "loopback"
  | "private"
  | "link-local"
  | "cloud-metadata"
  | "unique-local"
  | "cgnat"
  | "multicast"
  | "unspecified"
  | "broadcast"
  | "documentation"
  | "benchmarking"
  | "reserved";

/** How an IPv6 address carries the IPv4 address it was judged by. */
export type EmbeddedIpv4 = "ipv4-mapped" | "ipv4-compatible" | "ipv4-translated" | "nat64" | "6to4";

/** The verdict on one address. */
export interface AddressClass {
  /** The address in canonical form (dotted quad, compressed IPv6). */
  address: string;
  /** 4 or 6. */
  version: 4 | 6;
  /** Its range; anything but `public` is refused. */
  range: AddressRange;
  /** Set when an IPv6 address was judged by the IPv4 address inside it. */
  embedded?: { form: EmbeddedIpv4; ipv4: string };
}

interface Block {
  prefix: number[];
  bits: number;
  range: AddressRange;
}

const block = (prefix: number[], bits: number, range: AddressRange): Block => ({
  prefix,
  bits,
  range,
});

// First match wins, so narrower blocks come before the blocks that contain them.
const IPV4_BLOCKS: readonly Block[] = [
  block([0], 8, "unspecified"), // "this network"; 0.0.0.0 reaches the local host on Linux
  block([10], 8, "private"),
  block([100, 64], 10, "cgnat"), // also holds Alibaba Cloud's metadata, 100.100.100.200
  block([127], 8, "loopback"),
  // Publicly routed, yet a platform's own: Azure's WireServer (host agent and DNS of every VM).
  block([168, 63, 129, 16], 32, "cloud-metadata"),
  block([169, 254, 169, 254], 32, "cloud-metadata"),
  block([169, 254], 16, "link-local"),
  block([172, 16], 12, "private"),
  block([192, 0, 0], 24, "reserved"), // IETF assignments; Oracle Cloud metadata is 192.0.0.192
  block([192, 0, 2], 24, "documentation"),
  block([192, 88, 99], 24, "reserved"), // 6to4 relay anycast, retired
  block([192, 168], 16, "private"),
  block([198, 18], 15, "benchmarking"),
  block([198, 51, 100], 24, "documentation"),
  block([203, 0, 113], 24, "documentation"),
  block([224], 4, "multicast"),
  block([255, 255, 255, 255], 32, "broadcast"),
  block([240], 4, "reserved"),
];

const IPV6_BLOCKS: readonly Block[] = [
  block([], 128, "unspecified"), // ::
  block([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1], 128, "loopback"),
  block([0, 0x64, 0xff, 0x9b, 0, 1], 48, "reserved"), // local-use NAT64: maps to anything
  block([1, 0, 0, 0, 0, 0, 0, 0], 64, "reserved"), // discard-only
  block([0x20, 0x01, 0, 0], 32, "reserved"), // Teredo: a tunnel to a hidden IPv4 address
  block([0x20, 0x01, 0, 2, 0, 0], 48, "benchmarking"),
  block([0x20, 0x01, 0x0d, 0xb8], 32, "documentation"),
  block([0x20, 0x01, 0], 23, "reserved"), // IETF protocol assignments
  block([0x3f, 0xff], 20, "documentation"),
  block([0xfc], 7, "unique-local"), // also holds AWS's IPv6 metadata, fd00:ec2::254
  block([0xfe, 0x80], 10, "link-local"),
  block([0xfe, 0xc0], 10, "reserved"), // site-local, retired
  block([0xff], 8, "multicast"),
];

/**
 * Classifies an IP address, in any notation, into the range that decides
 * whether web_fetch may connect to it. An IPv6 address that carries an IPv4
 * address (mapped `::ffff:a.b.c.d`, translated `::ffff:0:a.b.c.d`, NAT64
 * `64:ff9b::a.b.c.d`, 6to4 `2002:AABB:CCDD::`) is judged by that IPv4 address.
 * The retired IPv4-compatible form `::a.b.c.d` is judged by its IPv4 address
 * when that is not public, and is `reserved` otherwise. IPv6 outside the
 * global unicast block 2000::/3 is `reserved`.
 *
 * @param address an IPv4 or IPv6 address
 * @returns the verdict
 * @throws {FloretError} `invalid_input` if the text is not an IP address
 * @example
 * ```ts
 * import { classifyAddress } from "@floret/engine/web-fetch";
 * console.log(classifyAddress("0177.1").range); // "loopback"
 * console.log(classifyAddress("::ffff:169.254.169.254").range); // "cloud-metadata"
 * ```
 */
export function classifyAddress(address: string): AddressClass {
  const ip = parseIpAddress(address);
  if (!ip) throw new FloretError("invalid_input", `Not an IP address: ${String(address)}`);
  return classifyIp(ip);
}

/**
 * {@link classifyAddress} for an address already parsed.
 *
 * @param ip the address
 * @returns the verdict
 */
export function classifyIp(ip: IpAddress): AddressClass {
  const address = formatIpAddress(ip);
  if (ip.version === 4) return { address, version: 4, range: rangeIn(ip.bytes, IPV4_BLOCKS) };
  const embedded = embeddedIpv4(ip.bytes);
  if (embedded) {
    const ipv4 = { version: 4 as const, bytes: embedded.bytes };
    const inner = rangeIn(ipv4.bytes, IPV4_BLOCKS);
    const range = embedded.form === "ipv4-compatible" && inner === "public" ? "reserved" : inner;
    return {
      address,
      version: 6,
      range,
      embedded: { form: embedded.form, ipv4: formatIpAddress(ipv4) },
    };
  }
  const range = rangeIn(ip.bytes, IPV6_BLOCKS);
  // Only 2000::/3 is global unicast; the rest is unassigned or special.
  if (range === "public" && (ip.bytes[0] & 0xe0) !== 0x20) {
    return { address, version: 6, range: "reserved" };
  }
  return { address, version: 6, range };
}

function embeddedIpv4(bytes: Uint8Array): { form: EmbeddedIpv4; bytes: Uint8Array } | undefined {
  const zerosUpTo = (end: number): boolean => bytes.subarray(0, end).every((b) => b === 0);
  const last4 = bytes.slice(12, 16);
  if (zerosUpTo(10) && bytes[10] === 0xff && bytes[11] === 0xff) {
    return { form: "ipv4-mapped", bytes: last4 };
  }
  if (
    zerosUpTo(8) && bytes[8] === 0xff && bytes[9] === 0xff && bytes[10] === 0 && bytes[11] === 0
  ) {
    return { form: "ipv4-translated", bytes: last4 };
  }
  // ::a.b.c.d, but not :: and ::1, which have ranges of their own.
  if (zerosUpTo(12) && !(zerosUpTo(15) && bytes[15] <= 1)) {
    return { form: "ipv4-compatible", bytes: last4 };
  }
  if (matches(bytes, [0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0], 96)) {
    return { form: "nat64", bytes: last4 };
  }
  if (bytes[0] === 0x20 && bytes[1] === 0x02) return { form: "6to4", bytes: bytes.slice(2, 6) };
  return undefined;
}

function rangeIn(bytes: Uint8Array, blocks: readonly Block[]): AddressRange {
  for (const candidate of blocks) {
    if (matches(bytes, candidate.prefix, candidate.bits)) return candidate.range;
  }
  return "public";
}

function matches(bytes: Uint8Array, prefix: readonly number[], bits: number): boolean {
  for (let bit = 0; bit < bits; bit += 8) {
    const index = bit / 8;
    const mask = bits - bit >= 8 ? 0xff : (0xff << (8 - (bits - bit))) & 0xff;
    if ((bytes[index] & mask) !== ((prefix[index] ?? 0) & mask)) return false;
  }
  return true;
}

/**
 * How a range is named in the reasons the model reads.
 *
 * @param verdict the verdict on an address
 * @returns e.g. "a loopback address" or "an IPv4-mapped form of a private address"
 */
export function describeRange(verdict: AddressClass): string {
  const names: Record<AddressRange, string> = {
    "public": "a public address",
    "loopback": "a loopback address",
    "private": "a private-network address",
    "link-local": "a link-local address",
    "cloud-metadata": "the cloud metadata address",
    "unique-local": "a unique-local (private IPv6) address",
    "cgnat": "a carrier-grade NAT (shared) address",
    "multicast": "a multicast address",
    "unspecified": "an unspecified address",
    "broadcast": "the broadcast address",
    "documentation": "a documentation-only address",
    "benchmarking": "a benchmarking address",
    "reserved": "a reserved or special-purpose address",
  };
  const name = names[verdict.range];
  return verdict.embedded && verdict.range !== "reserved"
    ? `${verdict.embedded.form} IPv6 carrying ${verdict.embedded.ipv4}, ${name}`
    : name;
}
