/**
 * The first check on a URL, before any lookup: the WHATWG parser reads it
 * (normalising every IP notation on the way) and only plain http(s) URLs to
 * a host name or a public address go on.
 *
 * @module
 */
import { classifyIp, describeRange } from "./address_ranges.ts";
import { type IpAddress, ipAddressOfUrl } from "./ip_address.ts";

/** Where a checked URL points: an address to check, or a name to resolve. */
export type FetchHost =
  | { kind: "ip"; address: IpAddress }
  | { kind: "name"; name: string };

/** A URL that passed the checks that need no lookup. */
export interface FetchTarget {
  /** The URL as parsed (the request goes to exactly this). */
  url: URL;
  /** The port to connect to, defaults filled in. */
  port: number;
  /** What the host is. */
  host: FetchHost;
}

/** A target, or why the URL is refused. */
export type TargetCheck = { ok: true; target: FetchTarget } | { ok: false; reason: string };

/** What the policy lets through on top of public addresses (tests only). */
export interface AddressAllowance {
  /** Let loopback addresses and `localhost` through. */
  loopback: boolean;
}

/**
 * Parses a URL and applies every check that needs no DNS lookup.
 *
 * @param text the URL, absolute, or relative to `base` (a redirect's Location)
 * @param allowance what is let through besides public addresses
 * @param base the URL a relative one is read against
 * @returns the target, or the reason it is refused
 */
export function checkUrl(text: string, allowance: AddressAllowance, base?: URL): TargetCheck {
  let url: URL;
  try {
    url = new URL(text, base);
  } catch {
    return { ok: false, reason: `Not a valid absolute URL: ${clip(text)}` };
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return { ok: false, reason: `Only http and https URLs can be fetched, not ${url.protocol}` };
  }
  if (url.username !== "" || url.password !== "") {
    return { ok: false, reason: "URLs with a user name or password are not fetched" };
  }
  url.hash = "";
  const port = url.port === "" ? (url.protocol === "https:" ? 443 : 80) : Number(url.port);
  const address = ipAddressOfUrl(url);
  if (address) {
    const verdict = classifyIp(address);
    if (!allowed(verdict.range, allowance)) {
      return {
        ok: false,
        reason: `Refused: ${verdict.address} is ${
          describeRange(verdict)
        }; only public addresses can be fetched`,
      };
    }
    return { ok: true, target: { url, port, host: { kind: "ip", address } } };
  }
  // A trailing dot names the same host; "localhost" is loopback by definition (RFC 6761).
  const name = url.hostname.replace(/\.$/, "");
  if (name === "" || name.includes("..")) {
    return { ok: false, reason: `Not a valid host name: ${clip(url.hostname)}` };
  }
  if ((name === "localhost" || name.endsWith(".localhost")) && !allowance.loopback) {
    return {
      ok: false,
      reason: `Refused: ${name} is the local machine; only public addresses can be fetched`,
    };
  }
  return { ok: true, target: { url, port, host: { kind: "name", name } } };
}

/**
 * Whether a range may be connected to.
 *
 * @param range the range of an address
 * @param allowance what is let through besides public addresses
 * @returns true for public addresses (and loopback when allowed)
 */
export function allowed(range: string, allowance: AddressAllowance): boolean {
  return range === "public" || (range === "loopback" && allowance.loopback);
}

function clip(text: string): string {
  const value = String(text);
  return value.length > 200 ? `${value.slice(0, 200)}…` : value;
}
