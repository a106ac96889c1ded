/**
 * One web_fetch, hop by hop: check the URL, resolve its name, check every
 * answer, connect to the checked address (never looking the name up again),
 * follow redirects by hand so each hop goes through the same checks, and
 * read the body up to the limit.
 *
 * @module
 */
import { classifyAddress, describeRange } from "./address_ranges.ts";
import { type AddressAllowance, allowed, checkUrl, type FetchTarget } from "./fetch_target.ts";
import { formatIpAddress } from "./ip_address.ts";
import { readLimited } from "./read_body.ts";
import { untilAborted } from "../until_aborted.ts";

/** Where the transport connects: the address that was checked. */
export interface ConnectTarget {
  /** An IPv4 dotted quad or an IPv6 address without brackets. */
  address: string;
  /** The TCP port. */
  port: number;
}

/** Resolves a host name to its addresses. */
export type Resolver = (host: string) => Promise<string[]>;

/** Sends one GET to the given address; must not follow redirects. */
export type Transport = (request: Request, target: ConnectTarget) => Promise<Response>;

/** What one fetch may do. */
export interface FetchLimits {
  /** Redirects followed at most. */
  maxRedirects: number;
  /** Body bytes read at most. */
  maxBytes: number;
  /** What is let through besides public addresses. */
  allowance: AddressAllowance;
}

/** A response that came back (any status), with its body read up to the limit. */
export interface FetchedPage {
  ok: true;
  /** The URL the body came from, after redirects. */
  url: string;
  /** The URLs that redirected, in order. */
  redirects: string[];
  status: number;
  statusText: string;
  /** The Content-Type header, or "" if absent. */
  contentType: string;
  bytes: Uint8Array;
  /** The body was longer than the limit. */
  truncated: boolean;
}

/** A fetch that was refused or failed, and why (for the model). */
export interface FetchRefusal {
  ok: false;
  reason: string;
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/**
 * Fetches a URL under the address policy. Never throws for anything the URL
 * or the network does; the signal's abort rejects with its reason.
 *
 * @param url the URL the model gave
 * @param limits redirect and size limits, and the address allowance
 * @param io the resolver and transport
 * @param signal the time limit and cancellation of the whole fetch
 * @returns the page, or why there is none
 */
export async function guardedFetch(
  url: string,
  limits: FetchLimits,
  io: { resolve: Resolver; fetch: Transport },
  signal: AbortSignal,
): Promise<FetchedPage | FetchRefusal> {
  const redirects: string[] = [];
  let check = checkUrl(url, limits.allowance);
  while (true) {
    if (!check.ok) return { ok: false, reason: hopPrefix(redirects) + check.reason };
    const target = check.target;
    const connect = await connectTarget(target, limits.allowance, io.resolve, signal);
    if ("reason" in connect) return { ok: false, reason: hopPrefix(redirects) + connect.reason };
    const request = new Request(target.url.href, {
      method: "GET",
      redirect: "manual",
      signal,
      headers: {
        "accept": "text/html, application/xhtml+xml, application/json, text/*;q=0.9",
        "accept-encoding": "identity",
        "user-agent": "floret-web-fetch/0.1",
      },
    });
    let response: Response;
    try {
      response = await untilAborted(io.fetch(request, connect), signal);
    } catch (error) {
      if (signal.aborted) throw signal.reason;
      return { ok: false, reason: `Could not fetch ${target.url.href}: ${messageOf(error)}` };
    }
    const location = response.headers.get("location");
    if (REDIRECT_STATUSES.has(response.status) && location !== null) {
      response.body?.cancel().catch(() => {});
      redirects.push(target.url.href);
      if (redirects.length > limits.maxRedirects) {
        return {
          ok: false,
          reason: `Too many redirects (more than ${limits.maxRedirects}), last to ${location}`,
        };
      }
      check = checkUrl(location, limits.allowance, target.url);
      continue;
    }
    let body;
    try {
      body = await readLimited(response.body, limits.maxBytes, signal);
    } catch (error) {
      if (signal.aborted) throw signal.reason;
      return { ok: false, reason: `Reading ${target.url.href} failed: ${messageOf(error)}` };
    }
    return {
      ok: true,
      url: target.url.href,
      redirects,
      status: response.status,
      statusText: response.statusText,
      contentType: response.headers.get("content-type") ?? "",
      bytes: body.bytes,
      truncated: body.truncated,
    };
  }
}

// Every answer must pass, not just the first: otherwise a name answering
// [public, private] would be one retry away from the private one.
async function connectTarget(
  target: FetchTarget,
  allowance: AddressAllowance,
  resolve: Resolver,
  signal: AbortSignal,
): Promise<ConnectTarget | { reason: string }> {
  if (target.host.kind === "ip") {
    return { address: formatIpAddress(target.host.address), port: target.port };
  }
  const name = target.host.name;
  let answers: unknown;
  try {
    answers = await untilAborted(resolve(name), signal);
  } catch (error) {
    if (signal.aborted) throw signal.reason;
    return { reason: `Could not resolve ${name}: ${messageOf(error)}` };
  }
  if (!Array.isArray(answers) || answers.length === 0) {
    return { reason: `Could not resolve ${name}: no addresses` };
  }
  let first: string | undefined;
  for (const answer of answers) {
    let verdict;
    try {
      verdict = classifyAddress(answer);
    } catch {
      return { reason: `Could not resolve ${name}: the resolver answered ${String(answer)}` };
    }
    if (!allowed(verdict.range, allowance)) {
      return {
        reason: `Refused: ${name} resolves to ${verdict.address}, ${
          describeRange(verdict)
        }; only public addresses can be fetched`,
      };
    }
    first ??= verdict.address;
  }
  return { address: first!, port: target.port };
}

function hopPrefix(redirects: string[]): string {
  return redirects.length === 0 ? "" : `After a redirect from ${redirects.at(-1)}: `;
}

function messageOf(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return typeof code === "string" && !error.message.includes(code)
      ? `${error.message} (${code})`
      : error.message;
  }
  return String(error);
}
