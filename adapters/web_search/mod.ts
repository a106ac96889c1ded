/**
 * Web search for agents: the `web_search` tool on a search backend — Brave
 * Search (`braveSearch`) or any object with `search(query, { signal, count })`.
 * Pair it with `@floret/engine/web-fetch` so the model can read what it found.
 *
 * @example
 * ```ts
 * import { defineAgent } from "@floret/engine";
 * import { scriptedGateway } from "@floret/engine/testing";
 * import { braveSearch, webSearchTool } from "@floret/engine/web-search";
 * const agent = defineAgent({
 *   id: "researcher",
 *   systemPrompt: "Search, then answer with sources.",
 *   gateway: scriptedGateway([{ text: "Nothing to search." }]),
 *   tools: [webSearchTool({ backend: braveSearch({ resolveApiKey: () => "brave-key" }) })],
 * });
 * console.log(agent.id); // "researcher"
 * ```
 *
 * @module
 */
export {
  DEFAULT_WEB_SEARCH_COUNT,
  DEFAULT_WEB_SEARCH_TIMEOUT_MS,
  WEB_SEARCH_MAX_QUERY_LENGTH,
  webSearchTool,
} from "./web_search_tool.ts";
export type { WebSearchToolOptions } from "./web_search_tool.ts";
export { BRAVE_SEARCH_URL, braveSearch } from "./brave.ts";
export type { BraveSearchOptions } from "./brave.ts";
export { SEARCH_RESULT_LIMITS } from "./search_backend.ts";
export type { SearchBackend, SearchResult } from "./search_backend.ts";
export type { WebActivity, WebActivitySource } from "../../src/tools/web_activity.ts";
export type { ToolDefinition, ToolEffect } from "../../src/tools/define_tool.ts";
