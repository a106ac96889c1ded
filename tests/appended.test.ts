/**
 * `appended`, which the projections use for lists that mostly stay short:
 * the result always ends with the value, and only a non-empty list is
 * changed in place.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { appended } from "../src/projection/appended.ts";

describe("appended", () => {
  test("an empty list gives a new list of the value and is left as it was", () => {
    const empty: number[] = [];
    const out = appended(empty, 7);
    assert.deepEqual(out, [7]);
    assert.notEqual(out, empty);
    assert.deepEqual(empty, []);
  });

  test("a non-empty list gets the value pushed and is returned", () => {
    const list = [1, 2];
    const out = appended(list, 3);
    assert.equal(out, list);
    assert.deepEqual(list, [1, 2, 3]);
  });
});
