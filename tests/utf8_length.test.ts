import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { utf8Length } from "../src/text/utf8_length.ts";

const encoded = (text: string): number => new TextEncoder().encode(text).length;

test("utf8Length counts what TextEncoder writes, for any UTF-16 string", () => {
  fc.assert(
    fc.property(fc.string({ unit: "binary" }), (text) => utf8Length(text) === encoded(text)),
    { numRuns: 500 },
  );
  fc.assert(
    // lone and doubled surrogates, which an encoder replaces by U+FFFD (3 bytes)
    fc.property(
      fc.array(fc.constantFrom("\ud800", "\udc00", "a", "é", "€", "😀", "\ud83d")),
      (parts) => utf8Length(parts.join("")) === encoded(parts.join("")),
    ),
    { numRuns: 500 },
  );
});

test("utf8Length of the edge cases", () => {
  for (
    const text of ["", "a", "\u007f", "\u0080", "\u07ff", "\u0800", "\uffff", "😀", "\ud800\ud800"]
  ) {
    assert.equal(utf8Length(text), encoded(text), JSON.stringify(text));
  }
});
