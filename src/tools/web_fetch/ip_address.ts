/**
 * IP address literals as bytes. The WHATWG URL parser does the hard part:
 * it turns every IPv4 notation (decimal, octal, hex, short forms) into a
 * dotted quad and every IPv6 notation into one canonical hex form, so this
 * file only splits canonical text into bytes.
 *
 * @module
 */

/** An IP address: 4 bytes for IPv4, 16 for IPv6. */
export interface IpAddress {
  /** 4 or 6. */
  readonly version: 4 | 6;
  /** Network byte order. */
  readonly bytes: Uint8Array;
}

const DOTTED_QUAD = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;
// Characters that would make the URL parser read something other than a host.
const NOT_A_HOST = /[/?#@\\\s[\]]/;

/**
 * Parses an IP address in any notation the URL parser accepts: `127.1`,
 * `0x7f.0.0.1`, `2130706433`, `::ffff:127.0.0.1`, `[::1]`, with an IPv6 zone
 * id (`fe80::1%eth0`, dropped: the zone does not change the range).
 *
 * @param text the address
 * @returns the address, or `undefined` if the text is not an IP address (a host name, say)
 */
export function parseIpAddress(text: string): IpAddress | undefined {
  if (typeof text !== "string" || text === "") return undefined;
  let host = text.startsWith("[") && text.endsWith("]") ? text.slice(1, -1) : text;
  if (host.includes(":")) {
    host = host.replace(/%.*$/, "");
    if (NOT_A_HOST.test(host)) return undefined;
    const hostname = hostnameOf(`[${host}]`);
    return hostname?.startsWith("[") ? parseCanonicalIpv6(hostname.slice(1, -1)) : undefined;
  }
  if (NOT_A_HOST.test(host) || host.includes("%")) return undefined;
  const hostname = hostnameOf(host);
  return hostname === undefined ? undefined : parseDottedQuad(hostname);
}

/**
 * The IP address a parsed URL names, if its host is one.
 *
 * @param url a URL from the WHATWG parser
 * @returns the address, or `undefined` for a host name
 */
export function ipAddressOfUrl(url: URL): IpAddress | undefined {
  const hostname = url.hostname;
  if (hostname.startsWith("[")) return parseCanonicalIpv6(hostname.slice(1, -1));
  return parseDottedQuad(hostname);
}

/**
 * The canonical text of an address: a dotted quad, or compressed lower-case
 * IPv6 without brackets (what a socket connects to).
 *
 * @param address the address
 * @returns its text
 */
export function formatIpAddress(address: IpAddress): string {
  if (address.version === 4) return Array.from(address.bytes).join(".");
  const pieces: string[] = [];
  for (let i = 0; i < 16; i += 2) {
    pieces.push(((address.bytes[i] << 8) | address.bytes[i + 1]).toString(16));
  }
  // The URL serializer picks the longest run of zero pieces to compress.
  return hostnameOf(`[${pieces.join(":")}]`)!.slice(1, -1);
}

function hostnameOf(host: string): string | undefined {
  try {
    return new URL(`http://${host}/`).hostname;
  } catch {
    return undefined;
  }
}

function parseDottedQuad(text: string): IpAddress | undefined {
  const match = DOTTED_QUAD.exec(text);
  if (!match) return undefined;
  const parts = match.slice(1).map(Number);
  if (parts.some((part) => part > 255)) return undefined;
  return { version: 4, bytes: Uint8Array.from(parts) };
}

// Only the URL serializer's output reaches here: hex pieces, at most one "::".
function parseCanonicalIpv6(text: string): IpAddress | undefined {
  const [head, tail, extra] = text.split("::");
  if (extra !== undefined) return undefined;
  const headPieces = head === "" ? [] : head.split(":");
  const tailPieces = tail === undefined || tail === "" ? [] : tail.split(":");
  const missing = 8 - headPieces.length - tailPieces.length;
  if (missing < 0 || (tail === undefined && missing !== 0)) return undefined;
  const pieces = [...headPieces, ...Array<string>(missing).fill("0"), ...tailPieces];
  const bytes = new Uint8Array(16);
  for (let i = 0; i < 8; i++) {
    if (!/^[0-9a-f]{1,4}$/.test(pieces[i])) return undefined;
    const value = parseInt(pieces[i], 16);
    bytes[2 * i] = value >> 8;
    bytes[2 * i + 1] = value & 0xff;
  }
  return { version: 6, bytes };
}
