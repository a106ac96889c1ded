/**
 * The `web_search` tool: the model gives a query, a {@link SearchBackend}
 * answers, and the model reads at most `count` results (title, URL,
 * snippet) while the tool item shows the same results as typed activity.
 *
 * @module
 */
import { z } from "zod";
import { FloretError } from "../../src/errors.ts";
import { defineTool, type ToolDefinition, type ToolResult } from "../../src/tools/define_tool.ts";
import { boundResults, SEARCH_RESULT_LIMITS, type SearchBackend } from "./search_backend.ts";
import type { SearchResult } from "./search_backend.ts";

/** Results asked for when `count` is not given. */
export const DEFAULT_WEB_SEARCH_COUNT = 10;
/** Default time limit of one search. */
export const DEFAULT_WEB_SEARCH_TIMEOUT_MS = 30_000;
/** Longest query the model may send. */
export const WEB_SEARCH_MAX_QUERY_LENGTH = 400;
const MAX_TIMEOUT_MS = 2_147_483_647;

/** Options of {@link webSearchTool}. */
export interface WebSearchToolOptions {
  /** Who searches: `braveSearch(...)` or any object with `search(query, { signal, count })`. */
  backend: SearchBackend;
  /** Results per search, 1 to 10. Default 10 (the most the tool keeps). */
  count?: number | undefined;
  /** Time limit of one search, in ms. Default 30 000. */
  timeoutMs?: number | undefined;
}

const INPUT = z.object({
  query: z.string().trim().min(1).max(WEB_SEARCH_MAX_QUERY_LENGTH).describe(
    "What to search the web for, in a few words",
  ),
});

/**
 * The `web_search` tool (input `{ query }`, effect `read`). A failed search
 * (an HTTP error, a timeout, a backend that throws) is an error result the
 * model reads; the results are bounded whatever the backend answers.
 *
 * @param options the backend, and how many results to show
 * @returns the tool, to put in an agent's `tools`
 * @throws {FloretError} `invalid_input` for a missing backend or a bad option
 * @example
 * ```ts
 * import { webSearchTool } from "@floret/engine/web-search";
 * const tool = webSearchTool({
 *   backend: { search: async () => [{ title: "Floret", url: "https://example.com/" }] },
 *   count: 3,
 * });
 * console.log(tool.name, tool.effect); // "web_search" "read"
 * ```
 */
export function webSearchTool(options: WebSearchToolOptions): ToolDefinition<{ query: string }> {
  const { backend, count, timeoutMs } = checkOptions(options);
  return defineTool({
    name: "web_search",
    description: "Search the web. Returns up to " + count +
      " results, each with a title, its URL and a snippet; read a page with a fetch tool.",
    input: INPUT,
    effect: "read",
    async execute({ query }, context): Promise<ToolResult> {
      const signal = AbortSignal.any([context.signal, AbortSignal.timeout(timeoutMs)]);
      let answer: unknown;
      try {
        answer = await backend.search(query, { signal, count });
      } catch (error) {
        if (context.signal.aborted) throw error; // cancelled: the engine settles it
        return {
          output: `The search for ${JSON.stringify(query)} failed: ${reasonOf(error, signal)}`,
          isError: true,
          activity: { label: `Search failed: ${query}`, web: { operation: "search", query } },
        };
      }
      const results = boundResults(answer, count);
      return {
        output: render(query, results),
        structured: { query, results },
        activity: {
          label: `Searched: ${query}`,
          web: { operation: "search", query, results: results.map((result) => ({ ...result })) },
        },
      };
    },
  });
}

/** The model's view of the results: numbered, one title, URL and snippet each. */
function render(query: string, results: SearchResult[]): string {
  if (results.length === 0) return `No results for ${JSON.stringify(query)}.`;
  const lines = [`Results for ${JSON.stringify(query)}:`];
  results.forEach((result, index) => {
    lines.push("", `${index + 1}. ${result.title || "(untitled)"}`, `   ${result.url}`);
    if (result.snippet) lines.push(`   ${result.snippet}`);
  });
  return lines.join("\n");
}

function reasonOf(error: unknown, signal: AbortSignal): string {
  if (signal.aborted) return "it took too long";
  const message = error instanceof Error ? error.message : String(error);
  return message.replace(/\s+/g, " ").slice(0, 500) || "no reason given";
}

function checkOptions(options: WebSearchToolOptions): Required<WebSearchToolOptions> {
  if (typeof options !== "object" || options === null) {
    throw new FloretError("invalid_input", "webSearchTool needs { backend }");
  }
  const { backend } = options;
  if (typeof backend?.search !== "function") {
    throw new FloretError(
      "invalid_input",
      "webSearchTool backend must have a search(query, { signal, count }) function",
    );
  }
  const count = options.count ?? DEFAULT_WEB_SEARCH_COUNT;
  if (!Number.isInteger(count) || count < 1 || count > SEARCH_RESULT_LIMITS.results) {
    throw new FloretError(
      "invalid_input",
      `webSearchTool count must be an integer from 1 to ${SEARCH_RESULT_LIMITS.results}`,
    );
  }
  const timeoutMs = options.timeoutMs ?? DEFAULT_WEB_SEARCH_TIMEOUT_MS;
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > MAX_TIMEOUT_MS) {
    throw new FloretError(
      "invalid_input",
      `webSearchTool timeoutMs must be an integer from 1 to ${MAX_TIMEOUT_MS}`,
    );
  }
  return { backend, count, timeoutMs };
}
