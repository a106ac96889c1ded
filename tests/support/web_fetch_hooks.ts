/**
 * Test hooks for web_fetch that can never send traffic off the machine:
 * a "public" site answered in memory, and forwarding to the loopback test
 * server for anything that is loopback (so an SSRF bug shows up as a hit).
 * Any other address makes the transport fail and records a violation.
 */
import { classifyAddress, type WebFetchOptions } from "@floret/engine/web-fetch";
import type { LoopbackServer } from "./web_fetch_server.ts";

/** A public-looking address; no packet is ever sent to it (the site lives in memory). */
export const PUBLIC_IP = "93.184.215.14";
/** The name the in-memory site answers to. */
export const SITE = "site.example";

type Transport = NonNullable<WebFetchOptions["fetch"]>;
type Route = (request: Request) => Response | Promise<Response>;

/** A transport for tests, with what it was asked to do. */
export interface TestTransport {
  fetch: Transport;
  /** Every call, in order. */
  calls: { url: string; method: string; address: string; port: number }[];
  /** Calls for an address that must never be reached. */
  violations: string[];
}

/**
 * A transport that serves `routes` (by path) for {@link PUBLIC_IP}, forwards
 * loopback targets to `server`, and refuses every other address.
 *
 * @param routes the in-memory site
 * @param server the loopback server that counts hits
 */
export function testTransport(
  routes: Record<string, Route> = {},
  server?: LoopbackServer,
): TestTransport {
  const calls: TestTransport["calls"] = [];
  const violations: string[] = [];
  const fetch: Transport = async (request, target) => {
    calls.push({ url: request.url, method: request.method, ...target });
    const path = new URL(request.url).pathname;
    if (target.address === PUBLIC_IP) {
      const route = routes[path];
      return route
        ? await route(request)
        : new Response("no such page", { status: 404, headers: { "content-type": "text/plain" } });
    }
    const range = classifyAddress(target.address).range;
    if (server && (range === "loopback" || range === "unspecified")) {
      // Only ever 127.0.0.1: the server counts the hit.
      return await globalThis.fetch(`http://127.0.0.1:${server.port}${path}`, {
        redirect: "manual",
      });
    }
    violations.push(`${target.address}:${target.port} (${request.url})`);
    throw new Error(`The test transport refuses ${target.address}`);
  };
  return { fetch, calls, violations };
}

/** A resolver from a fixed table; unknown names fail like NXDOMAIN. */
export function tableResolver(table: Record<string, string[]>): {
  resolve: (host: string) => Promise<string[]>;
  asked: string[];
} {
  const asked: string[] = [];
  return {
    asked,
    resolve: (host) => {
      asked.push(host);
      const answers = Object.hasOwn(table, host) ? table[host] : undefined;
      return answers
        ? Promise.resolve(answers)
        : Promise.reject(new Error(`no such name: ${host}`));
    },
  };
}

/** Options that turn on the test-only loopback allowance of the real transport. */
export function loopbackAllowed(
  options: WebFetchOptions = {},
  tlsCa?: string,
): WebFetchOptions {
  return {
    ...options,
    [Symbol.for("@floret/engine/web-fetch:testing")]: { allowLoopback: true, tlsCa },
  } as WebFetchOptions;
}
