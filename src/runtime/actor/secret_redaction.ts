/**
 * Keeps secret answers out of what a run stores or reports. A secret can
 * come back in other spellings than the one the user typed: a provider error
 * quoting the request JSON-escaped, `\u`-escaped or URL-encoded, or cut short;
 * a model that copies it into its reply or into a tool's arguments. So the
 * redactor knows each spelling of each secret and replaces every run of 12
 * characters of any of them (a spelling shorter than that: the whole of it).
 *
 * @module
 */
import { REDACTED } from "../../projection/history/answers_message.ts";

/** How long a piece of a spelling must be to be redacted on its own. */
export const SECRET_RUN = 12;

/** The secret values of one run and the text that must not hold them. */
export class SecretRedactor {
  // Every 12-character run of every spelling, so one pass over a text finds
  // them all (a secret may be up to 16,000 characters: a set, not a search per run).
  readonly #runs = new Set<string>();
  // Spellings too short to have a run: searched for whole.
  readonly #whole = new Set<string>();

  /** Whether any secret is held. */
  get empty(): boolean {
    return this.#runs.size === 0 && this.#whole.size === 0;
  }

  /** Learns a secret value (an empty one is nothing to hide). */
  add(value: string): void {
    if (value === "") return;
    for (const spelling of spellingsOf(value)) {
      if (spelling.length < SECRET_RUN) {
        this.#whole.add(spelling);
        continue;
      }
      for (let i = 0; i + SECRET_RUN <= spelling.length; i++) {
        this.#runs.add(spelling.slice(i, i + SECRET_RUN));
      }
    }
  }

  /** `text` with every spelling, or run of one, replaced by the redaction marker. */
  redact(text: string): string {
    if (this.empty || text === "") return text;
    const spans = this.#spans(text);
    if (spans.length === 0) return text;
    let out = "";
    let kept = 0;
    for (const [from, to] of spans) {
      out += text.slice(kept, from) + REDACTED;
      kept = to;
    }
    return out + text.slice(kept);
  }

  /**
   * How much of `text`, a stream's unshown tail, can be shown now: the
   * longest start that no character still to come can turn into a secret
   * (the last 11 characters, or a match that may still grow, wait).
   */
  settledLength(text: string): number {
    if (this.empty) return text.length;
    const open = text.length - (SECRET_RUN - 1);
    let cut = open;
    for (const [from, to] of this.#spans(text)) if (to > open) cut = Math.min(cut, from);
    if (cut <= 0) return 0;
    // Never split a surrogate pair between two deltas.
    const code = text.charCodeAt(cut - 1);
    return code >= 0xd800 && code <= 0xdbff ? cut - 1 : cut;
  }

  /** Where secrets sit in `text`: sorted, overlapping or touching matches merged. */
  #spans(text: string): [number, number][] {
    const found: [number, number][] = [];
    if (this.#runs.size > 0) {
      for (let i = 0; i + SECRET_RUN <= text.length; i++) {
        if (this.#runs.has(text.slice(i, i + SECRET_RUN))) found.push([i, i + SECRET_RUN]);
      }
    }
    for (const whole of this.#whole) {
      for (let at = text.indexOf(whole); at >= 0; at = text.indexOf(whole, at + 1)) {
        found.push([at, at + whole.length]);
      }
    }
    found.sort((a, b) => a[0] - b[0]);
    const merged: [number, number][] = [];
    for (const span of found) {
      const last = merged.at(-1);
      if (last && span[0] <= last[1]) last[1] = Math.max(last[1], span[1]);
      else merged.push([span[0], span[1]]);
    }
    return merged;
  }
}

/**
 * The ways a value is commonly written down: as typed, JSON-escaped (with and
 * without `\u` escapes for non-ASCII and HTML-sensitive characters), wholly
 * `\u`-escaped (either hex case), and URL-encoded (either hex case, `+` for spaces).
 */
function spellingsOf(value: string): Set<string> {
  const json = JSON.stringify(value).slice(1, -1);
  const ascii = json.replace(/[^\x20-\x7e]/g, unicodeEscape);
  const htmlSafe = ascii.replace(/[<>&'=]/g, unicodeEscape);
  const everyUnit = value.replace(/[\s\S]/g, unicodeEscape);
  const slashes = json.replace(/\//g, "\\/"); // encoders that escape `/` too
  const found = new Set([value, json, slashes, ascii, htmlSafe, everyUnit]);
  // `\u` escapes with upper-case hex digits, as some encoders write them.
  for (const spelling of [ascii, htmlSafe, everyUnit]) {
    found.add(spelling.replace(/\\u[0-9a-f]{4}/g, upperHex));
  }
  let url: string | undefined;
  try {
    url = encodeURIComponent(value);
  } catch {
    url = undefined; // a lone surrogate has no UTF-8 form
  }
  if (url !== undefined) {
    const lower = url.replace(/%[0-9A-F]{2}/g, (code) => code.toLowerCase());
    for (const encoded of [url, lower]) {
      found.add(encoded);
      found.add(encoded.replace(/%20/g, "+"));
      found.add(encoded.replace(/[!'()*]/g, percentOf)); // stricter encoders escape these too
    }
  }
  return found;
}

function unicodeEscape(char: string): string {
  return `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`;
}

function upperHex(escape: string): string {
  return `\\u${escape.slice(2).toUpperCase()}`;
}

function percentOf(char: string): string {
  return `%${char.charCodeAt(0).toString(16).toUpperCase()}`;
}

/**
 * Fields that identify rather than say something (ids, kinds, states): left
 * alone, since a short secret could otherwise cut into an id and break the
 * thread's bookkeeping. Everything else a run writes is text that may echo a secret.
 */
const IDENTIFIERS = new Set([
  "kind",
  "seq",
  "at",
  "id",
  "turnId",
  "runId",
  "callId",
  "callIds",
  "interactionId",
  "artifactId",
  "reaskOf",
  "name",
  "stateKey",
  "status",
  "finish",
  "decision",
  "dispatched",
  "code",
  "requestKey",
  "agentId",
  "interaction",
  "toolName",
  "structuredTypes",
]);

/**
 * `value` with `redact` applied to every string in it but identifiers; tool
 * arguments (JSON text) are redacted as JSON, so they stay parseable. The
 * same object comes back when nothing changed.
 *
 * @param value an entry, a failure, an artifact: plain JSON-like data
 * @param redact the run's redaction
 */
export function redactDeep<T>(value: T, redact: (text: string) => string): T {
  return deep(value, redact, undefined, true) as T;
}

function deep(
  value: unknown,
  redact: (text: string) => string,
  key: string | undefined,
  skipIds: boolean,
): unknown {
  if (typeof value === "string") {
    return key === "arguments" && skipIds ? redactArguments(value, redact) : redact(value);
  }
  if (typeof value === "number" && !skipIds) {
    // A numeric secret (a PIN) the model passed as a number: a string marker in its place.
    const text = String(value);
    const redacted = redact(text);
    return redacted === text ? value : redacted;
  }
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const next = deep(value[i], redact, undefined, skipIds);
      if (next !== value[i]) (out ??= value.slice())[i] = next;
    }
    return out ?? value;
  }
  if (value === null || typeof value !== "object") return value;
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return value; // bytes, dates: not text
  let out: Record<string, unknown> | undefined;
  for (const [name, field] of Object.entries(value)) {
    if (skipIds && IDENTIFIERS.has(name)) continue;
    const next = deep(field, redact, name, skipIds);
    if (next !== field) (out ??= { ...value as Record<string, unknown> })[name] = next;
  }
  return out ?? value;
}

/** Tool arguments as JSON text: redacted inside their parsed strings, written back as JSON. */
function redactArguments(text: string, redact: (text: string) => string): string {
  const plain = redact(text);
  if (plain === text) return text;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return plain; // not JSON: the text as text
  }
  // Inside the arguments every string is the model's: none is an identifier.
  const json = JSON.stringify(deep(parsed, redact, undefined, false));
  // An escaped spelling the parse did not undo (double-escaped): secrecy first.
  return redact(json);
}
