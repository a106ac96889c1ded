/**
 * The pair-keyed map behind tool items and tool batches: it answers as a map
 * of joined keys would, and pairs whose joined forms coincide stay apart.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { PairMap } from "../src/projection/pair_map.ts";

describe("PairMap", () => {
  test("matches a map keyed by the pair, for any sets and reads", () => {
    const part = fc.constantFrom("a", "b", "a|b", "b|a", "");
    fc.assert(
      fc.property(
        fc.array(fc.tuple(part, part, fc.integer())),
        fc.array(fc.tuple(part, part)),
        (sets, reads) => {
          const pairs = new PairMap<number>();
          const model = new Map<string, number>();
          for (const [outer, inner, value] of sets) {
            pairs.set(outer, inner, value);
            model.set(JSON.stringify([outer, inner]), value);
          }
          for (const [outer, inner] of [...reads, ...sets.map(([o, i]) => [o, i] as const)]) {
            assert.equal(pairs.get(outer, inner), model.get(JSON.stringify([outer, inner])));
          }
        },
      ),
    );
  });

  test("keeps pairs apart whose parts join to the same text", () => {
    const pairs = new PairMap<string>();
    pairs.set("run|1", "call", "first");
    pairs.set("run", "1|call", "second");
    assert.equal(pairs.get("run|1", "call"), "first");
    assert.equal(pairs.get("run", "1|call"), "second");
    assert.equal(pairs.get("run", "call"), undefined);
  });
});
