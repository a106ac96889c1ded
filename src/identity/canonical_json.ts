/**
 * Canonical JSON: object keys sorted, no whitespace, `undefined` fields left
 * out. Equal values always give equal text, so hashes of it are stable.
 *
 * @module
 */

/**
 * Serialises a JSON-compatible value canonically.
 *
 * @param value plain data (objects, arrays, strings, finite numbers, booleans, null)
 * @returns the canonical JSON text
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") {
    if (typeof value === "number" && !Number.isFinite(value)) return "null";
    return value === undefined ? "null" : JSON.stringify(value);
  }
  if (Array.isArray(value)) {
    let out = "[";
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out += ",";
      out += canonicalJson(value[i]);
    }
    return out + "]";
  }
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record).sort();
  let out = "{";
  let first = true;
  for (const key of keys) {
    const field = record[key];
    if (field === undefined || typeof field === "function") continue;
    if (!first) out += ",";
    first = false;
    // A string or boolean field is its JSON text: no call of this function for it (every
    // message and tool input is hashed through here, and most fields are strings).
    const type = typeof field;
    out += JSON.stringify(key) + ":" +
      (type === "string" || type === "boolean" ? JSON.stringify(field) : canonicalJson(field));
  }
  return out + "}";
}
