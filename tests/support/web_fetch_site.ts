/**
 * The in-memory "public" site the web_fetch hook tests fetch from: its
 * routes, and a tool wired to it through the injected resolver and
 * transport of web_fetch_hooks.ts, so no packet leaves the machine.
 */
import { type WebFetchOptions, webFetchTool } from "@floret/engine/web-fetch";
import { HTML_PAGE } from "./web_fetch_server.ts";
import { PUBLIC_IP, SITE, tableResolver, testTransport } from "./web_fetch_hooks.ts";

/**
 * A response with the given Content-Type (none when empty).
 *
 * @param type the Content-Type header, or "" for none
 * @param body the body
 * @param status the HTTP status
 */
export const typed = (type: string, body: BodyInit | null, status = 200): Response =>
  new Response(body, { status, headers: type ? { "content-type": type } : {} });

/** The site's pages, by path: one per content type, status and redirect case. */
export const ROUTES = {
  "/text": () => typed("text/plain; charset=utf-8", "hello from the site"),
  "/latin1": () =>
    typed("text/plain; charset=iso-8859-1", new Uint8Array([0x63, 0x61, 0x66, 0xe9])),
  "/json": () => typed("application/json", '{"name":"floret","tags":["a","b"]}'),
  "/problem": () => typed("application/problem+json", '{"title":"x"}'),
  "/bad-json": () => typed("application/json", "{not json"),
  "/html": () => typed("text/html; charset=utf-8", HTML_PAGE),
  "/png": () => typed("image/png", new Uint8Array([0x89, 0x50, 0x4e, 0x47])),
  "/untyped": () => typed("", new TextEncoder().encode("what am I")),
  "/missing": () => typed("text/plain", "gone", 404),
  "/old": () => new Response(null, { status: 301, headers: { location: "/text" } }),
  "/loop": () => new Response(null, { status: 302, headers: { location: "/loop" } }),
  "/see-other": () =>
    new Response(null, { status: 303, headers: { location: `http://other.example:8080/json` } }),
  "/big": () => typed("text/plain", "0123456789".repeat(1000)),
};

/**
 * A tool on the in-memory site, with its hooks for assertions.
 *
 * @param options tool options other than the resolver and transport
 */
export function siteTool(options: Omit<WebFetchOptions, "resolve" | "fetch"> = {}) {
  const transport = testTransport(ROUTES);
  const resolver = tableResolver({ [SITE]: [PUBLIC_IP], "other.example": [PUBLIC_IP] });
  const tool = webFetchTool({ ...options, resolve: resolver.resolve, fetch: transport.fetch });
  return { tool, transport, resolver };
}
