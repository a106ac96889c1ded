/**
 * HTML to Markdown with turndown (on Node, Bun and Deno it parses with its
 * own pure-JavaScript DOM, domino, so no browser DOM is needed). It loads on
 * the first HTML page, so a host whose model never fetches one never pays
 * for it.
 *
 * node-html-markdown was the first choice, but its time grows with the
 * square of the output (it re-reads the whole output string after every
 * append): 512 KB of HTML took 24 s. Turndown stays near linear: 2 MiB, the
 * default body limit, takes a few seconds.
 *
 * @module
 */
import type TurndownService from "turndown";
import { optionalPeer } from "../../src/optional_peer.ts";

let converter: Promise<TurndownService> | undefined;

// An optional peer of the package: a missing turndown is reported with the
// command that installs it.
const loadTurndown = optionalPeer({
  package: "turndown",
  entry: "@floret/engine/web-fetch",
  load: () => import("turndown"),
});

// Elements whose text is not page content.
const DROPPED: TurndownService.Filter = [
  "head",
  "title",
  "script",
  "style",
  "noscript",
  "template",
  "iframe",
  "object",
  "embed",
  "svg" as TurndownService.TagName,
];

/**
 * Converts an HTML document to Markdown: ATX headings, fenced code, `-`
 * bullets; scripts, styles and the document head are dropped.
 *
 * @param html the document
 * @returns its Markdown
 */
export async function htmlToMarkdown(html: string): Promise<string> {
  converter ??= loadTurndown().then(
    ({ default: Turndown }) => {
      const service = new Turndown({
        headingStyle: "atx",
        codeBlockStyle: "fenced",
        bulletListMarker: "-",
      });
      service.remove(DROPPED);
      return service;
    },
    (error) => {
      converter = undefined; // let the next page try again
      throw error;
    },
  );
  return (await converter).turndown(html);
}
