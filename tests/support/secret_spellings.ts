/**
 * A secret answer in the spellings it can come back in (DESIGN §11 "Secrets
 * stay out"), written here independently of the engine: the tests scan what
 * was stored for each of them.
 */

/** Quotes, `<&>`, a space and non-ASCII: every spelling differs from the others. */
export const SECRET = 'Pa55-"wörd"<&> and-more-text-Z93kq';

/** The secret as typed, JSON-escaped, `\u`-escaped (all, and non-ASCII only), URL-encoded, cut short. */
export function spellings(secret: string): Record<string, string> {
  const json = JSON.stringify(secret).slice(1, -1);
  const hex = (c: string): string => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`;
  return {
    raw: secret,
    json,
    unicodeAll: secret.replace(/[\s\S]/g, hex),
    unicodeAscii: json.replace(/[^\x20-\x7e]/g, hex),
    unicodeUpper: secret.replace(/[\s\S]/g, (c) => hex(c).toUpperCase().replace("\\U", "\\u")),
    url: encodeURIComponent(secret),
    first14: secret.slice(0, 14),
    last12: secret.slice(-12),
  };
}

/** The names of the spellings found in `text` (empty: none). */
export function leaks(text: string, secret = SECRET): string[] {
  return Object.entries(spellings(secret)).filter(([, spelled]) => text.includes(spelled))
    .map(([name]) => name);
}
