// Canonical JSON is what every fingerprint hashes: its text must never change.
// Checked against the earlier implementation over random JSON values (and
// random objects with undefined and function fields), and on the edge cases a
// fingerprint's input can hold: undefined fields, functions, non-finite
// numbers, escapes, nested arrays.
import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { canonicalJson } from "../src/identity/canonical_json.ts";

/**
 * The reference: canonicalJson as it was before its leaves were inlined (every
 * field through the recursive call), whose text every stored fingerprint holds.
 */
function reference(value: unknown): string {
  if (value === null || typeof value !== "object") {
    if (typeof value === "number" && !Number.isFinite(value)) return "null";
    return value === undefined ? "null" : JSON.stringify(value);
  }
  if (Array.isArray(value)) {
    let out = "[";
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out += ",";
      out += reference(value[i]);
    }
    return out + "]";
  }
  const record = value as Record<string, unknown>;
  let out = "{";
  let first = true;
  for (const key of Object.keys(record).sort()) {
    const field = record[key];
    if (field === undefined || typeof field === "function") continue;
    if (!first) out += ",";
    first = false;
    out += JSON.stringify(key) + ":" + reference(field);
  }
  return out + "}";
}

test("canonicalJson gives the earlier text over random JSON values", () => {
  fc.assert(
    fc.property(fc.jsonValue(), (value) => {
      assert.equal(canonicalJson(value), reference(value));
    }),
    { numRuns: 2000 },
  );
  const odd = fc.oneof(fc.constant(undefined), fc.constant(() => 1), fc.double(), fc.jsonValue());
  fc.assert(
    fc.property(fc.dictionary(fc.string(), fc.oneof(odd, fc.array(odd))), (value) => {
      assert.equal(canonicalJson(value), reference(value));
    }),
    { numRuns: 1000 },
  );
});

test("canonicalJson on the edge cases of a fingerprint's input", () => {
  const fn = () => 1;
  const cases: [unknown, string][] = [
    [{ b: "x", a: true, c: false, d: undefined, e: fn }, '{"a":true,"b":"x","c":false}'],
    [{ n: Infinity, m: -0, o: NaN, p: 1.5e-7 }, '{"m":0,"n":null,"o":null,"p":1.5e-7}'],
    [
      { 'q"': 'line\n"quoted"\u0001', "\u00e9": "\u00fc" },
      reference({ 'q"': 'line\n"quoted"\u0001', "\u00e9": "\u00fc" }),
    ],
    [
      [1, undefined, "s", [true, null], { z: [], y: {} }],
      '[1,null,"s",[true,null],{"y":{},"z":[]}]',
    ],
    [{ title: null }, '{"title":null}'],
    ["top", '"top"'],
    [undefined, "null"],
  ];
  for (const [value, text] of cases) {
    assert.equal(canonicalJson(value), text);
  }
});
