/**
 * Brave Search as a {@link SearchBackend}: one GET to the Web Search API
 * (`/res/v1/web/search`), the key in the `X-Subscription-Token` header. The
 * key is read (or resolved) right before each request and appears nowhere
 * else: not in the URL, not in errors, never in what the tool returns.
 *
 * @module
 */
import { FloretError } from "../../src/errors.ts";
import type { SearchBackend, SearchResult } from "./search_backend.ts";

/** The Brave Web Search endpoint. */
export const BRAVE_SEARCH_URL = "https://api.search.brave.com/res/v1/web/search";
// Brave answers in tens of KiB; anything far larger is not a search answer.
const MAX_BODY_BYTES = 4 * 1024 * 1024;
// Brave's own ceiling for `count`.
const BRAVE_MAX_COUNT = 20;

/** Options of {@link braveSearch}. */
export interface BraveSearchOptions {
  /** The subscription token. Give this or `resolveApiKey`. */
  apiKey?: string | undefined;
  /** Called right before each request for the current token (rotation, per-tenant keys). */
  resolveApiKey?: (() => string | Promise<string>) | undefined;
  /** The fetch to use (tests, proxies); default `globalThis.fetch`. */
  fetch?: typeof fetch | undefined;
}

/**
 * A backend on the Brave Search API.
 *
 * @param options the key (`apiKey`) or a function that gives it (`resolveApiKey`), and an optional `fetch`
 * @returns the backend, for `webSearchTool({ backend })`
 * @throws {FloretError} `invalid_input` when neither or both of `apiKey` and `resolveApiKey` are given, or one is empty
 * @example
 * ```ts
 * import { braveSearch, webSearchTool } from "@floret/engine/web-search";
 * const search = webSearchTool({ backend: braveSearch({ apiKey: "brave-key" }) });
 * console.log(search.name); // "web_search"
 * ```
 */
export function braveSearch(options: BraveSearchOptions): SearchBackend {
  if (typeof options !== "object" || options === null) {
    throw new FloretError("invalid_input", "braveSearch needs { apiKey } or { resolveApiKey }");
  }
  const { apiKey, resolveApiKey } = options;
  if ((apiKey === undefined) === (resolveApiKey === undefined)) {
    throw new FloretError(
      "invalid_input",
      "braveSearch needs exactly one of apiKey and resolveApiKey",
    );
  }
  if (apiKey !== undefined && (typeof apiKey !== "string" || apiKey.trim() === "")) {
    throw new FloretError("invalid_input", "braveSearch apiKey must be a non-empty string");
  }
  if (resolveApiKey !== undefined && typeof resolveApiKey !== "function") {
    throw new FloretError("invalid_input", "braveSearch resolveApiKey must be a function");
  }
  if (options.fetch !== undefined && typeof options.fetch !== "function") {
    throw new FloretError("invalid_input", "braveSearch fetch must be a function");
  }
  const send = options.fetch;
  return {
    async search(query, { signal, count }): Promise<SearchResult[]> {
      const key = apiKey ?? await resolveApiKey!();
      if (typeof key !== "string" || key.trim() === "") {
        throw new Error("The Brave Search key resolver gave no key");
      }
      const url = new URL(BRAVE_SEARCH_URL);
      url.searchParams.set("q", query);
      url.searchParams.set("count", String(Math.min(Math.max(1, count), BRAVE_MAX_COUNT)));
      const response = await (send ?? fetch)(url, {
        method: "GET",
        headers: { Accept: "application/json", "X-Subscription-Token": key },
        signal,
        redirect: "error",
      });
      const body = await readBounded(response);
      if (!response.ok) throw new Error(braveFailure(response.status, body, key));
      let parsed: unknown;
      try {
        parsed = JSON.parse(body);
      } catch {
        throw new Error("Brave Search answered with a body that is not JSON");
      }
      return resultsOf(parsed);
    },
  };
}

/** The `web.results` of a Brave answer, as search results (bounded later by the tool). */
function resultsOf(answer: unknown): SearchResult[] {
  const web = (answer as { web?: { results?: unknown } } | null)?.web;
  if (!Array.isArray(web?.results)) return [];
  return web.results.map((entry: Record<string, unknown> | null) =>
    ({
      title: typeof entry?.title === "string" ? entry.title : "",
      url: typeof entry?.url === "string" ? entry.url : "",
      snippet: typeof entry?.description === "string" ? entry.description : undefined,
    }) as SearchResult
  );
}

/** An error message with Brave's status and reason, never the key. */
function braveFailure(status: number, body: string, key: string): string {
  let reason = "";
  try {
    const error = (JSON.parse(body) as { error?: { code?: unknown; detail?: unknown } }).error;
    const parts = [error?.code, error?.detail].filter((part) => typeof part === "string");
    reason = parts.join(": ").slice(0, 300);
  } catch {
    // not JSON: the status says enough
  }
  const message = `Brave Search answered HTTP ${status}${reason ? ` (${reason})` : ""}`;
  return message.split(key).join("[redacted]");
}

/** The body as text, refused past {@link MAX_BODY_BYTES}. */
async function readBounded(response: Response): Promise<string> {
  if (!response.body) return "";
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_BODY_BYTES) {
      await reader.cancel().catch(() => {});
      throw new Error(`Brave Search answered with more than ${MAX_BODY_BYTES} bytes`);
    }
    chunks.push(value);
  }
  const whole = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    whole.set(chunk, at);
    at += chunk.byteLength;
  }
  return new TextDecoder().decode(whole);
}
