/**
 * The web_fetch tool, independent of any runtime: the runtime's resolver,
 * transport and HTML converter come in from the adapter entry
 * (`@floret/engine/web-fetch`), which is what hosts import.
 *
 * @module
 */
import { z } from "zod";
import { FloretError } from "../../errors.ts";
import { defineTool, type ToolDefinition, type ToolResult } from "../define_tool.ts";
import { type FetchedPage, guardedFetch, type Resolver, type Transport } from "./guarded_fetch.ts";
import { type HtmlToMarkdown, renderContent } from "./render_content.ts";

/** Default time limit of one fetch, redirects and body included. */
export const DEFAULT_WEB_FETCH_TIMEOUT_MS = 15_000;
/** Default number of body bytes read (2 MiB). */
export const DEFAULT_WEB_FETCH_MAX_BYTES: number = 2 * 1024 * 1024;
/** Default number of redirects followed. */
export const DEFAULT_WEB_FETCH_MAX_REDIRECTS = 5;
/** Longest URL the model may pass. */
export const WEB_FETCH_MAX_URL_LENGTH = 8192;

// setTimeout's ceiling; AbortSignal.timeout fires at once above it on some runtimes.
const MAX_TIMEOUT_MS = 2_147_483_647;

/** Options of `webFetchTool`. */
export interface WebFetchOptions {
  /** Time limit of the whole fetch, redirects included. Default 15 000 ms. */
  timeoutMs?: number | undefined;
  /** Body bytes read at most; the model is told when the body was cut. Default 2 MiB. */
  maxBytes?: number | undefined;
  /** Redirects followed at most; each hop is checked again. Default 5. */
  maxRedirects?: number | undefined;
  /** For tests only: resolve names yourself. Addresses are still checked. */
  resolve?: ((host: string) => Promise<string[]>) | undefined;
  /** For tests only: the transport used after every check, given the checked address to connect to. */
  fetch?:
    | ((request: Request, target: { address: string; port: number }) => Promise<Response>)
    | undefined;
}

/** What the runtime adapter supplies. */
export interface WebFetchRuntime {
  /** The resolver used when `options.resolve` is absent. */
  resolve: Resolver;
  /** The transport used when `options.fetch` is absent. */
  fetch: Transport;
  /** The HTML converter. */
  htmlToMarkdown: HtmlToMarkdown;
  /** Let loopback through (the adapter's own tests; never from user input). */
  allowLoopback: boolean;
}

// Loose so that a call asking for another method or a body is refused in
// words the model reads, instead of being stripped to a GET it did not ask for.
const INPUT = z.looseObject({
  url: z.string().min(1).max(WEB_FETCH_MAX_URL_LENGTH).describe(
    "The http or https URL to fetch",
  ),
});

/** Why a call asks for more than a GET, if it does. */
function notAGet(input: Record<string, unknown>): string | undefined {
  const method = input.method;
  if (method !== undefined && (typeof method !== "string" || method.toUpperCase() !== "GET")) {
    return `web_fetch only sends GET requests; the method ${
      JSON.stringify(method)
    } is refused and nothing was sent`;
  }
  if (input.body !== undefined) {
    return "web_fetch only sends GET requests, which carry no body; nothing was sent";
  }
  return undefined;
}

/**
 * Builds the web_fetch tool on a runtime's resolver, transport and converter.
 *
 * @param options the host's options
 * @param runtime what the adapter supplies
 * @returns the tool
 * @throws {FloretError} `invalid_input` for a bad option
 */
export function createWebFetchTool(
  options: WebFetchOptions | undefined,
  runtime: WebFetchRuntime,
): ToolDefinition<{ url: string }> {
  const settings = validate(options);
  const resolve = settings.resolve ?? runtime.resolve;
  const transport = settings.fetch ?? runtime.fetch;
  const limits = {
    maxBytes: settings.maxBytes,
    maxRedirects: settings.maxRedirects,
    allowance: { loopback: runtime.allowLoopback },
  };
  return defineTool({
    name: "web_fetch",
    description: "Fetch a public web page with an HTTP GET and return its content: HTML as " +
      "Markdown, JSON pretty-printed, other text as is. Only http and https URLs to public " +
      "internet addresses are fetched; local and private network addresses are refused. " +
      `Bodies longer than ${settings.maxBytes} bytes are cut.`,
    input: INPUT,
    // A GET changes nothing, so a call cut short by a crash can simply run again.
    effect: "read",
    execute: async (input, context): Promise<ToolResult> => {
      const refusal = notAGet(input);
      if (refusal) return { output: refusal, isError: true };
      const url = input.url;
      const timeout = AbortSignal.timeout(settings.timeoutMs);
      const signal = AbortSignal.any([context.signal, timeout]);
      try {
        const page = await guardedFetch(url, limits, { resolve, fetch: transport }, signal);
        if (!page.ok) return { output: page.reason, isError: true };
        // The conversion runs under the same time limit as the fetch.
        return await present(page, limits.maxBytes, runtime.htmlToMarkdown, signal);
      } catch (error) {
        if (timeout.aborted) {
          return { output: `Timed out after ${settings.timeoutMs} ms: ${url}`, isError: true };
        }
        if (context.signal.aborted) return { output: "The fetch was cancelled", isError: true };
        return {
          output: `web_fetch failed: ${error instanceof Error ? error.message : String(error)}`,
          isError: true,
        };
      }
    },
  });
}

async function present(
  page: FetchedPage,
  maxBytes: number,
  htmlToMarkdown: HtmlToMarkdown,
  signal: AbortSignal,
): Promise<ToolResult> {
  const rendered = await renderContent(page.contentType, page, htmlToMarkdown, signal);
  if (!rendered.ok) return { output: `${rendered.reason} (${page.url})`, isError: true };
  const lines = [`URL: ${page.url}`, `Status: ${page.status} ${page.statusText}`.trimEnd()];
  if (page.redirects.length > 0) lines.push(`Redirected from: ${page.redirects.join(" -> ")}`);
  lines.push(`Content-Type: ${rendered.mediaType}`);
  if (page.truncated) {
    lines.push(
      `Note: the body was cut after ${maxBytes} bytes; what follows is incomplete.`,
    );
  }
  if (rendered.note !== undefined) {
    lines.push(`Note: ${rendered.note}; what follows is shortened.`);
  }
  const failed = page.status < 200 || page.status > 299;
  return {
    output: `${lines.join("\n")}\n\n${rendered.text}`,
    isError: failed || undefined,
    structured: {
      url: page.url,
      redirects: page.redirects,
      status: page.status,
      contentType: rendered.mediaType,
      bytes: page.bytes.byteLength,
      truncated: page.truncated,
    },
  };
}

interface Settings {
  timeoutMs: number;
  maxBytes: number;
  maxRedirects: number;
  resolve?: Resolver;
  fetch?: Transport;
}

function validate(options: WebFetchOptions | undefined): Settings {
  if (options === undefined) return defaults();
  if (typeof options !== "object" || options === null) {
    throw new FloretError("invalid_input", "webFetchTool options must be an object");
  }
  const settings = defaults();
  if (options.timeoutMs !== undefined) {
    const value = options.timeoutMs;
    if (
      typeof value !== "number" || !Number.isInteger(value) || value <= 0 || value > MAX_TIMEOUT_MS
    ) {
      throw new FloretError("invalid_input", `Invalid timeoutMs: ${String(value)}`);
    }
    settings.timeoutMs = value;
  }
  if (options.maxBytes !== undefined) {
    const value = options.maxBytes;
    if (!Number.isSafeInteger(value) || value <= 0) {
      throw new FloretError("invalid_input", `Invalid maxBytes: ${String(value)}`);
    }
    settings.maxBytes = value;
  }
  if (options.maxRedirects !== undefined) {
    const value = options.maxRedirects;
    if (!Number.isSafeInteger(value) || value < 0) {
      throw new FloretError("invalid_input", `Invalid maxRedirects: ${String(value)}`);
    }
    settings.maxRedirects = value;
  }
  for (const hook of ["resolve", "fetch"] as const) {
    if (options[hook] !== undefined && typeof options[hook] !== "function") {
      throw new FloretError("invalid_input", `Invalid ${hook}: must be a function`);
    }
  }
  settings.resolve = options.resolve;
  settings.fetch = options.fetch;
  return settings;
}

function defaults(): Settings {
  return {
    timeoutMs: DEFAULT_WEB_FETCH_TIMEOUT_MS,
    maxBytes: DEFAULT_WEB_FETCH_MAX_BYTES,
    maxRedirects: DEFAULT_WEB_FETCH_MAX_REDIRECTS,
  };
}
