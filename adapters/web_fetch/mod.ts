/**
 * The web_fetch tool: lets a model GET public web pages as Markdown, JSON or
 * text, and nothing on the local machine or its networks. A separate entry
 * point because it loads `node:http`, `node:dns` and an HTML converter.
 *
 * @example
 * ```ts
 * import { defineAgent } from "@floret/engine";
 * import { scriptedGateway } from "@floret/engine/testing";
 * import { webFetchTool } from "@floret/engine/web-fetch";
 * const agent = defineAgent({
 *   id: "researcher",
 *   systemPrompt: "Look things up.",
 *   gateway: scriptedGateway([{ text: "Nothing to fetch." }]),
 *   tools: [webFetchTool({ timeoutMs: 10_000 })],
 * });
 * console.log(agent.id); // "researcher"
 * ```
 *
 * @module
 */
import type { ToolDefinition } from "../../src/tools/define_tool.ts";
import {
  createWebFetchTool,
  type WebFetchOptions,
} from "../../src/tools/web_fetch/web_fetch_tool.ts";
import { htmlToMarkdown } from "./html_markdown.ts";
import { systemResolve } from "./node_resolver.ts";
import { nodeTransport } from "./node_transport.ts";

export {
  DEFAULT_WEB_FETCH_MAX_BYTES,
  DEFAULT_WEB_FETCH_MAX_REDIRECTS,
  DEFAULT_WEB_FETCH_TIMEOUT_MS,
  WEB_FETCH_MAX_URL_LENGTH,
} from "../../src/tools/web_fetch/web_fetch_tool.ts";
export type { WebFetchOptions } from "../../src/tools/web_fetch/web_fetch_tool.ts";
export { classifyAddress } from "../../src/tools/web_fetch/address_ranges.ts";
export type {
  AddressClass,
  AddressRange,
  EmbeddedIpv4,
} from "../../src/tools/web_fetch/address_ranges.ts";
export type { ConnectTarget } from "../../src/tools/web_fetch/guarded_fetch.ts";

// The project's own tests reach a loopback server through the real transport
// with this key; it is deliberately not exported or typed. It gives host code
// nothing it does not already have (a host can pass any `fetch`), and the
// model only ever controls the URL.
const TESTING = Symbol.for("@floret/engine/web-fetch:testing");

interface TestingSwitch {
  allowLoopback?: boolean;
  tlsCa?: string;
}

/**
 * The `web_fetch` tool (input `{ url }`, effect `read`). It sends a GET to
 * http(s) URLs on public addresses only: the URL's host in any notation,
 * every address its name resolves to and every redirect hop are checked
 * before connecting, and the connection goes to the checked address. HTML
 * comes back as Markdown, JSON pretty-printed, text as is; refusals, HTTP
 * errors, timeouts and other content types are error results the model reads.
 *
 * @param options limits, and test hooks (`resolve`, `fetch`)
 * @returns the tool, to put in an agent's `tools`
 * @throws {FloretError} `invalid_input` for a bad option
 * @example
 * ```ts
 * import { webFetchTool } from "@floret/engine/web-fetch";
 * const tool = webFetchTool({ maxBytes: 512 * 1024, maxRedirects: 3 });
 * console.log(tool.name, tool.effect); // "web_fetch" "read"
 * ```
 */
export function webFetchTool(options?: WebFetchOptions): ToolDefinition<{ url: string }> {
  const testing = (options as Record<symbol, TestingSwitch | undefined> | undefined)?.[TESTING];
  return createWebFetchTool(options, {
    resolve: systemResolve,
    fetch: nodeTransport({ ca: testing?.tlsCa }),
    htmlToMarkdown,
    allowLoopback: testing?.allowLoopback === true,
  });
}

// The engine types this entry's functions take and return, re-exported so its
// documentation is complete on its own (deno doc --lint, JSR); the same types
// as `@floret/engine`.
export type { ToolDefinition, ToolEffect } from "@floret/engine";
