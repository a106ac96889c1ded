/**
 * Turns a fetched body into text for the model: HTML becomes Markdown, JSON
 * is pretty-printed, other text passes through; every other type is refused.
 *
 * @module
 */

import { slicedHtmlToMarkdown } from "./html_slices.ts";

/**
 * Turns a piece of HTML into Markdown. It is given a page a slice at a time
 * (see html_slices.ts), each piece well-formed and of bounded size.
 */
export type HtmlToMarkdown = (html: string) => string | Promise<string>;

/** How a body was rendered. */
export type ContentKind = "html" | "json" | "text";

/** The rendered text, or why the type is refused. */
export type Rendered =
  | {
    ok: true;
    kind: ContentKind;
    mediaType: string;
    text: string;
    /** Why the text is shorter than the page (the conversion stopped early). */
    note?: string;
  }
  | { ok: false; reason: string };

/**
 * Renders a body by its Content-Type.
 *
 * @param contentType the Content-Type header ("" if absent)
 * @param body the bytes, and whether they were cut at the limit
 * @param htmlToMarkdown the HTML converter, given one slice at a time
 * @param signal ends an HTML conversion early (the fetch's time limit, a cancel)
 * @returns the text, or why the type is refused
 */
export async function renderContent(
  contentType: string,
  body: { bytes: Uint8Array; truncated: boolean },
  htmlToMarkdown: HtmlToMarkdown,
  signal: AbortSignal = new AbortController().signal,
): Promise<Rendered> {
  const { mediaType, charset } = parseContentType(contentType);
  const kind = kindOf(mediaType);
  if (!kind) {
    return {
      ok: false,
      reason: mediaType === ""
        ? "The response has no Content-Type; only text, HTML and JSON are fetched"
        : `Content type ${mediaType} is not supported; only text, HTML and JSON are fetched`,
    };
  }
  const text = decode(body.bytes, charset, body.truncated);
  switch (kind) {
    case "html": {
      const markdown = await slicedHtmlToMarkdown(text, htmlToMarkdown, signal);
      const rendered: Rendered = { ok: true, kind, mediaType, text: markdown.text.trim() };
      if (markdown.note !== undefined) rendered.note = markdown.note;
      return rendered;
    }
    case "json":
      return { ok: true, kind, mediaType, text: body.truncated ? text : prettyJson(text) };
    case "text":
      return { ok: true, kind, mediaType, text };
    default: {
      const never: never = kind;
      throw new Error(`Unknown content kind: ${String(never)}`);
    }
  }
}

function kindOf(mediaType: string): ContentKind | undefined {
  if (mediaType === "text/html" || mediaType === "application/xhtml+xml") return "html";
  if (mediaType === "application/json" || mediaType.endsWith("+json")) return "json";
  if (mediaType.startsWith("text/")) return "text";
  return undefined;
}

function parseContentType(header: string): { mediaType: string; charset?: string } {
  const [type, ...params] = header.split(";");
  let charset: string | undefined;
  for (const param of params) {
    const [key, value] = param.split("=", 2);
    if (key.trim().toLowerCase() === "charset" && value) {
      charset = value.trim().replace(/^"(.*)"$/, "$1");
    }
  }
  return { mediaType: type.trim().toLowerCase(), charset };
}

function decode(bytes: Uint8Array, charset: string | undefined, truncated: boolean): string {
  let decoder: TextDecoder;
  try {
    decoder = new TextDecoder(charset ?? "utf-8");
  } catch {
    decoder = new TextDecoder("utf-8"); // an unknown label: UTF-8 is the web's default
  }
  // A cut body may end inside a character; streaming mode drops that partial tail.
  return decoder.decode(bytes, { stream: truncated });
}

function prettyJson(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text; // not valid JSON after all: pass it through as sent
  }
}
