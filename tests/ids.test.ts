/**
 * Engine ids (src/identity/ids.ts): a prefix, a time part, a sequence within
 * the millisecond and a random tail; ids of one process sort in creation
 * order, and the time part reads back as the creation time.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { idTime, newId } from "../src/identity/ids.ts";

const SHAPE = /^turn_[0-9a-hjkmnp-tv-z]{21}$/;

test("ids sort in creation order and carry their creation time", () => {
  const before = Date.now();
  const ids = Array.from({ length: 5_000 }, () => newId("turn"));
  const after = Date.now();
  for (const [at, id] of ids.entries()) {
    assert.match(id, SHAPE);
    const time = idTime(id)!;
    assert.ok(time >= before && time <= after, `${id} reads as ${time}`);
    if (at > 0) assert.ok(ids[at - 1] < id, `${ids[at - 1]} before ${id}`);
  }
  assert.equal(new Set(ids).size, ids.length);
});

test("an id made after a pause has the later time", async () => {
  const first = newId("run");
  await new Promise((resolve) => setTimeout(resolve, 5));
  const second = newId("run");
  assert.ok(idTime(second)! > idTime(first)!);
  assert.ok(first < second);
});
