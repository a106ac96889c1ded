/**
 * Web activity: the typed display facts of a search (ours or a provider's
 * hosted one) on a tool item — the query and the results, each with its URL
 * and, when the source gave them, its title and snippet. A UI renders a
 * search from these facts, live and after a reload, without parsing rows.
 *
 * @module
 */

/** One result of a search, as shown on the tool item. */
export interface WebActivitySource {
  /** The page's address (http or https). */
  url: string;
  /** The page's title, when the source gave one. */
  title?: string;
  /** A short extract, when the source gave one. */
  snippet?: string;
}

/** What a web search did (`ToolActivity.web`). */
export interface WebActivity {
  /** What was done; `search` for web_search and hosted searches. */
  operation: "search" | "open_page" | "find_in_page";
  /** The query the model searched for. */
  query?: string;
  /** The page opened or searched in (`open_page`, `find_in_page`). */
  url?: string;
  /** The results, in the source's order; absent when the source did not list them. */
  results?: WebActivitySource[];
}

/** Bounds of web activity (UTF-16 code units). */
export const WEB_ACTIVITY_LIMITS = {
  query: 1_000,
  url: 2_048,
  title: 300,
  snippet: 1_000,
  results: 50,
} as const;

const OPERATIONS: ReadonlySet<string> = new Set(["search", "open_page", "find_in_page"]);

/**
 * Checks and bounds web activity: long texts are cut, results past the bound
 * and results without a string URL are dropped; a wrong shape is a problem.
 *
 * @param value what the tool returned as `activity.web`
 * @returns the stored facts, or why they were rejected
 */
export function normaliseWebActivity(
  value: unknown,
): { web: WebActivity } | { problem: string } {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return { problem: "activity.web must be an object" };
  }
  const { operation, query, url, results } = value as Record<string, unknown>;
  if (typeof operation !== "string" || !OPERATIONS.has(operation)) {
    return { problem: "activity.web.operation must be search, open_page or find_in_page" };
  }
  const web: WebActivity = { operation: operation as WebActivity["operation"] };
  if (query !== undefined) {
    if (typeof query !== "string") return { problem: "activity.web.query must be a string" };
    web.query = clip(query, WEB_ACTIVITY_LIMITS.query);
  }
  if (url !== undefined) {
    if (typeof url !== "string") return { problem: "activity.web.url must be a string" };
    web.url = clip(url, WEB_ACTIVITY_LIMITS.url);
  }
  if (results !== undefined) {
    if (!Array.isArray(results)) return { problem: "activity.web.results must be an array" };
    const kept: WebActivitySource[] = [];
    for (const result of results) {
      if (kept.length >= WEB_ACTIVITY_LIMITS.results) break;
      const { url, title, snippet } = (result ?? {}) as Record<string, unknown>;
      if (typeof url !== "string" || url.length > WEB_ACTIVITY_LIMITS.url) continue;
      const source: WebActivitySource = { url };
      if (typeof title === "string") source.title = clip(title, WEB_ACTIVITY_LIMITS.title);
      if (typeof snippet === "string") source.snippet = clip(snippet, WEB_ACTIVITY_LIMITS.snippet);
      kept.push(source);
    }
    web.results = kept;
  }
  return { web };
}

/** Cuts to `max` code units on a character boundary; lone surrogates become U+FFFD. */
function clip(text: string, max: number): string {
  const whole = text.replace(
    /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g,
    "\uFFFD",
  );
  if (whole.length <= max) return whole;
  let end = max;
  const last = whole.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return whole.slice(0, end);
}
