/**
 * HTML to Markdown in bounded slices, so no page can hold the event loop.
 *
 * A converter over a whole document (turndown parses it into a DOM first)
 * runs synchronously for as long as the page asks: seconds for 2 MiB, and
 * far more for deeply nested markup. Here the document is cut into pieces of
 * at most {@link SLICE_BYTES} of markup at tag boundaries; each piece gets the
 * elements still open at its start re-opened (and closed at its end), so
 * lists, tables and emphasis read on across cuts. Nesting deeper than
 * {@link MAX_DEPTH} is flattened (the text stays, the extra tags go). Between
 * pieces the event loop gets a turn, and the caller's signal (the fetch's
 * time limit, a cancel) and the work limit are checked: past them the model
 * gets what was converted so far and a note.
 *
 * The cutting is a single forward scan (no regular expression that could
 * backtrack), so its cost is linear in the page.
 *
 * @module
 */

/** Markup bytes converted per slice (and scanned before the loop gets a turn). */
export const SLICE_BYTES = 16 * 1024;
/** Elements nested deeper than this are flattened to their text. */
export const MAX_DEPTH = 48;
/** At most this many slices per page (8 MiB of markup); the rest is left out, with a note. */
export const MAX_SLICES = 512;

/** Converts one piece of HTML (a fragment, its open elements closed) to Markdown. */
export type FragmentConverter = (html: string) => string | Promise<string>;

/** The Markdown of a page, and why it is shorter than the page, if it is. */
export interface SlicedMarkdown {
  text: string;
  /** Set when conversion stopped early: the time limit, a cancel, or the work limit. */
  note?: string;
}

// Elements whose content is raw text: no tags inside, so no cut inside either.
const RAW_TEXT = new Set(["script", "style", "textarea", "title", "xmp", "noscript", "iframe"]);
// Raw-text elements that are no page content: left out with what they hold.
const DROPPED_RAW = new Set(["script", "style", "title", "noscript", "iframe"]);
// Elements without content or closing tag.
const VOID = new Set([
  "area",
  "base",
  "br",
  "col",
  "embed",
  "hr",
  "img",
  "input",
  "link",
  "meta",
  "param",
  "source",
  "track",
  "wbr",
]);

interface Open {
  name: string;
  /** The opening tag as written, re-emitted at the start of the next piece. */
  tag: string;
}

/**
 * Converts an HTML document to Markdown a slice at a time.
 *
 * @param html the document
 * @param convert converts one well-formed fragment
 * @param signal aborted when the fetch's time is up or the call is cancelled
 * @returns the Markdown, with a note when it stopped early
 */
export async function slicedHtmlToMarkdown(
  html: string,
  convert: FragmentConverter,
  signal: AbortSignal,
): Promise<SlicedMarkdown> {
  const out: string[] = [];
  const cutter = new Cutter(html);
  for (let slices = 0;; slices++) {
    if (signal.aborted) {
      return { text: joined(out), note: "the conversion to Markdown ran out of time" };
    }
    if (slices === MAX_SLICES) {
      return { text: joined(out), note: "the page was too large to convert whole" };
    }
    const piece = cutter.next();
    if (piece === undefined) return { text: joined(out) };
    const markdown = (await convert(piece)).trim();
    if (markdown !== "") out.push(markdown);
    // The loop's turn: timers, other threads and requests run between slices.
    await new Promise<void>((resolve) => setTimeout(resolve, 0));
  }
}

function joined(parts: string[]): string {
  return parts.join("\n\n");
}

/** Cuts a document into well-formed pieces of bounded size, in one forward scan. */
class Cutter {
  readonly #html: string;
  #at = 0;
  readonly #stack: Open[] = [];
  // Opening tags dropped past MAX_DEPTH, by name: their closing tags are dropped too.
  readonly #flattened = new Map<string, number>();

  constructor(html: string) {
    this.#html = html;
  }

  /** The next piece, or `undefined` at the end. */
  next(): string | undefined {
    const html = this.#html;
    if (this.#at >= html.length) return undefined;
    const parts: string[] = this.#stack.map((open) => open.tag);
    const start = this.#at;
    let textFrom = this.#at;
    while (this.#at < html.length && this.#at - start < SLICE_BYTES) {
      const lt = html.indexOf("<", this.#at);
      if (lt < 0 || lt - this.#at > SLICE_BYTES) {
        // A long run of text: cut it at a space past the slice size (never inside a word
        // or an entity), so no piece holds more than about a slice of it.
        const space = html.indexOf(" ", this.#at + SLICE_BYTES);
        const cut = space < 0 || space - this.#at > 2 * SLICE_BYTES
          ? this.#at + SLICE_BYTES
          : space;
        this.#at = Math.min(lt < 0 ? html.length : lt, cut);
        break;
      }
      const token = this.#tokenAt(lt);
      if (token === undefined) {
        // A "<" that starts no tag is text.
        this.#at = lt + 1;
        continue;
      }
      parts.push(html.slice(textFrom, lt));
      this.#at = token.end;
      textFrom = token.end;
      const kept = this.#keep(token);
      if (kept !== undefined) parts.push(kept);
    }
    parts.push(html.slice(textFrom, this.#at));
    // Close what is open, innermost first; the next piece opens it again.
    for (let i = this.#stack.length - 1; i >= 0; i--) parts.push(`</${this.#stack[i].name}>`);
    return parts.join("");
  }

  /** What a tag leaves in the piece (itself, closings it implies, or nothing). */
  #keep(token: Token): string | undefined {
    if (token.kind === "other") return token.text;
    if (token.kind === "open") {
      if (VOID.has(token.name) || token.selfClosing) return token.text;
      if (this.#stack.length >= MAX_DEPTH) {
        this.#flattened.set(token.name, (this.#flattened.get(token.name) ?? 0) + 1);
        return undefined;
      }
      this.#stack.push({ name: token.name, tag: token.text });
      return token.text;
    }
    const dropped = this.#flattened.get(token.name) ?? 0;
    if (dropped > 0) {
      this.#flattened.set(token.name, dropped - 1);
      return undefined;
    }
    // Close up to the nearest open element of that name; a stray closing tag is dropped.
    for (let i = this.#stack.length - 1; i >= 0; i--) {
      if (this.#stack[i].name !== token.name) continue;
      const closed = this.#stack.splice(i).reverse().map((open) => `</${open.name}>`);
      return closed.join("");
    }
    return undefined;
  }

  /** The tag (or comment, doctype, raw-text element) at `lt`, if one starts there. */
  #tokenAt(lt: number): Token | undefined {
    const html = this.#html;
    const next = html.charCodeAt(lt + 1);
    if (next === 0x21 /* ! */ || next === 0x3f /* ? */) {
      // A comment ends at "-->", a doctype or processing instruction at ">".
      const comment = html.startsWith("<!--", lt);
      const close = comment ? html.indexOf("-->", lt + 4) : html.indexOf(">", lt + 2);
      const end = close < 0 ? html.length : close + (comment ? 3 : 1);
      return { kind: "other", text: "", end };
    }
    const closing = next === 0x2f; /* / */
    const nameAt = closing ? lt + 2 : lt + 1;
    if (!isLetter(html.charCodeAt(nameAt))) return undefined;
    let i = nameAt;
    while (i < html.length && isNameChar(html.charCodeAt(i))) i++;
    const name = html.slice(nameAt, i).toLowerCase();
    // Attributes: quoted values may hold ">", so scan with the quote state.
    let quote = 0;
    for (; i < html.length; i++) {
      const c = html.charCodeAt(i);
      if (quote !== 0) {
        if (c === quote) quote = 0;
      } else if (c === 0x22 || c === 0x27) {
        quote = c;
      } else if (c === 0x3e /* > */) {
        break;
      }
    }
    // An unterminated tag swallows the rest of the page, as in a browser.
    const end = Math.min(i + 1, html.length);
    const text = html.slice(lt, end);
    if (closing) return { kind: "close", name, text, end };
    const selfClosing = html.charCodeAt(i - 1) === 0x2f;
    if (RAW_TEXT.has(name) && !selfClosing) {
      // Raw text runs to its closing tag (found by a case-insensitive scan from here on,
      // so each element's text is scanned once). Scripts and the like are no page content
      // and go; a textarea's text stays.
      const closer = new RegExp(`</${name}`, "gi");
      closer.lastIndex = end;
      const stop = closer.exec(html)?.index ?? -1;
      const close = stop < 0 ? -1 : html.indexOf(">", stop);
      const rawEnd = close < 0 ? html.length : close + 1;
      const kept = DROPPED_RAW.has(name) ? "" : html.slice(lt, rawEnd);
      return { kind: "other", text: kept, end: rawEnd };
    }
    return { kind: "open", name, text, end, selfClosing };
  }
}

type Token =
  | { kind: "open"; name: string; text: string; end: number; selfClosing: boolean }
  | { kind: "close"; name: string; text: string; end: number }
  | { kind: "other"; text: string; end: number };

function isLetter(c: number): boolean {
  return (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
}

function isNameChar(c: number): boolean {
  return isLetter(c) || (c >= 0x30 && c <= 0x39) || c === 0x2d || c === 0x3a || c === 0x5f;
}
