/**
 * The search backend contract and the bounding of what a backend returns:
 * whatever a backend (ours or a host's) answers, the model and the tool item
 * only ever see at most `count` well-formed results with bounded texts.
 *
 * @module
 */

/** One search result. */
export interface SearchResult {
  /** The page's title. */
  title: string;
  /** The page's address (http or https). */
  url: string;
  /** A short extract of the page, when the backend has one. */
  snippet?: string;
}

/** A web search service: Brave (`braveSearch`) or any host-made one. */
export interface SearchBackend {
  /**
   * Searches the web.
   *
   * @param query what the model asked for
   * @param options `signal` aborts the search (cancel, shutdown, timeout); `count` is how many results to return at most
   * @returns the results, best first
   */
  search(query: string, options: { signal: AbortSignal; count: number }): Promise<SearchResult[]>;
}

/** Bounds of one result (UTF-16 code units) and of a result list. */
export const SEARCH_RESULT_LIMITS = {
  /** Results the tool asks for and keeps at most. */
  results: 10,
  title: 200,
  snippet: 500,
  url: 2_048,
} as const;

/**
 * Keeps the first `count` usable results: a string http(s) URL of bounded
 * length is required; titles and snippets are made plain (tags and runs of
 * white space removed) and cut. A backend is host code, so anything else in
 * its answer is dropped rather than trusted.
 *
 * @param value what the backend answered
 * @param count how many results to keep at most
 * @returns the bounded results
 */
export function boundResults(value: unknown, count: number): SearchResult[] {
  if (!Array.isArray(value)) return [];
  const kept: SearchResult[] = [];
  for (const entry of value) {
    if (kept.length >= count) break;
    if (typeof entry !== "object" || entry === null) continue;
    const { title, url, snippet } = entry as Record<string, unknown>;
    if (typeof url !== "string" || url.length > SEARCH_RESULT_LIMITS.url || !isWebUrl(url)) {
      continue;
    }
    const result: SearchResult = {
      title: typeof title === "string" ? plain(title, SEARCH_RESULT_LIMITS.title) : "",
      url,
    };
    if (typeof snippet === "string") {
      const text = plain(snippet, SEARCH_RESULT_LIMITS.snippet);
      if (text) result.snippet = text;
    }
    kept.push(result);
  }
  return kept;
}

function isWebUrl(text: string): boolean {
  try {
    const { protocol } = new URL(text);
    return protocol === "http:" || protocol === "https:";
  } catch {
    return false;
  }
}

const ENTITIES: Record<string, string> = {
  amp: "&",
  lt: "<",
  gt: ">",
  quot: '"',
  apos: "'",
  "#39": "'",
  nbsp: " ",
};

/**
 * Plain text of a search engine's title or snippet: search APIs mark matches
 * with `<strong>` and escape entities; the model and a UI want the words.
 */
function plain(text: string, max: number): string {
  const words = text
    .replace(/<[^>]{0,200}>/g, "")
    .replace(/&(amp|lt|gt|quot|apos|#39|nbsp);/g, (_, name: string) => ENTITIES[name]!)
    .replace(/\s+/g, " ")
    .trim();
  if (words.length <= max) return words;
  let end = max - 1;
  const last = words.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return `${words.slice(0, end)}…`;
}
