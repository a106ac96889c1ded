/**
 * HTML to Markdown with node-html-markdown (a DOM-free converter that runs
 * the same on Node, Bun and Deno). It loads on the first HTML page, so a
 * host whose model never fetches one never pays for it.
 *
 * @module
 */
import type { NodeHtmlMarkdown } from "node-html-markdown";

let converter: Promise<NodeHtmlMarkdown> | undefined;

/**
 * Converts an HTML document to Markdown; scripts and styles are dropped.
 *
 * @param html the document
 * @returns its Markdown
 */
export async function htmlToMarkdown(html: string): Promise<string> {
  converter ??= import("node-html-markdown").then(
    ({ NodeHtmlMarkdown }) => new NodeHtmlMarkdown({ maxConsecutiveNewlines: 2 }),
    (error) => {
      converter = undefined; // let the next page try again
      throw error;
    },
  );
  return (await converter).translate(html);
}
