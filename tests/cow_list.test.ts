/**
 * The copy-on-write list behind views' items and turns: it behaves as an
 * array, and what it shared never changes afterwards, whatever is written.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { CHUNK, copyShared, CowList } from "../src/projection/cow_list.ts";

type Op =
  | { op: "push"; value: number }
  | { op: "set"; at: number; value: number }
  | { op: "remove"; at: number }
  | { op: "share" };

const ops: fc.Arbitrary<Op[]> = fc.array(
  fc.oneof(
    { weight: 6, arbitrary: fc.record({ op: fc.constant("push" as const), value: fc.integer() }) },
    {
      weight: 3,
      arbitrary: fc.record({ op: fc.constant("set" as const), at: fc.nat(), value: fc.integer() }),
    },
    { weight: 1, arbitrary: fc.record({ op: fc.constant("remove" as const), at: fc.nat() }) },
    { weight: 1, arbitrary: fc.record({ op: fc.constant("share" as const) }) },
  ),
  { maxLength: 3 * CHUNK + 40 },
);

describe("CowList", () => {
  test("matches an array, and every share keeps what it saw", () => {
    fc.assert(
      fc.property(ops, (script) => {
        const list = new CowList<number>();
        const model: number[] = [];
        const shares: { shared: ReturnType<CowList<number>["share"]>; expected: number[] }[] = [];
        for (const step of script) {
          if (step.op === "push") {
            list.push(step.value);
            model.push(step.value);
          } else if (step.op === "set" && model.length > 0) {
            const at = step.at % model.length;
            list.set(at, step.value);
            model[at] = step.value;
          } else if (step.op === "remove" && model.length > 0) {
            const at = step.at % model.length;
            list.removeAt(at);
            model.splice(at, 1);
          } else if (step.op === "share") {
            shares.push({ shared: list.share(), expected: model.slice() });
          }
          assert.equal(list.length, model.length);
        }
        assert.deepEqual([...list], model);
        assert.deepEqual(list.slice(), model);
        assert.deepEqual(list.map((value) => value * 2), model.map((value) => value * 2));
        assert.deepEqual(list.slice(1, -1), model.slice(1, -1));
        assert.equal(list.at(-1), model.at(-1));
        assert.equal(list.at(model.length), undefined);
        for (const { shared, expected } of shares) {
          assert.equal(shared.length, expected.length);
          assert.deepEqual(copyShared(shared, (value) => value), expected);
        }
      }),
      { numRuns: 200 },
    );
  });

  test("a share copies chunk references, not elements", () => {
    const list = new CowList<{ n: number }>();
    for (let n = 0; n < 5 * CHUNK; n++) list.push({ n });
    const shared = list.share();
    assert.equal(shared.chunks.length, 5);
    list.set(0, { n: -1 });
    list.push({ n: 5 * CHUNK });
    // Only the chunk written to was copied; the others are still the shared ones.
    assert.equal(shared.chunks[0][0].n, 0);
    assert.equal(copyShared(shared, (value) => value).length, 5 * CHUNK);
    assert.equal(list.at(0)?.n, -1);
    assert.equal(list.length, 5 * CHUNK + 1);
  });

  test("writes outside the list are refused", () => {
    const list = new CowList<number>();
    list.push(1);
    assert.throws(() => list.set(1, 2), RangeError);
    assert.throws(() => list.removeAt(-1), RangeError);
    assert.deepEqual(list.slice(), [1]);
  });
});
