/**
 * `defineTool` takes a zod 4 object schema: a zod 3 schema or any non-zod
 * value is `invalid_input` naming "zod 4"; a non-object schema is refused.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import { z as z3 } from "zod/v3";
import { defineTool, isFloretError } from "@floret/engine";

const refused = (pattern: RegExp) => (error: unknown): boolean =>
  isFloretError(error) && error.code === "invalid_input" && pattern.test(error.message);

const spec = (input: unknown) =>
  ({ name: "t", description: "d", input, execute: () => "ok" }) as unknown as Parameters<
    typeof defineTool
  >[0];

test("a zod 3 schema or a non-zod value is invalid_input naming zod 4", () => {
  assert.throws(() => defineTool(spec(z3.object({ a: z3.string() }))), refused(/zod 3.*zod 4/));
  for (const value of [{ type: "object", properties: {} }, "x", null, undefined, 42]) {
    assert.throws(() => defineTool(spec(value)), refused(/zod 4/), String(value));
  }
});

test("the input must be an object schema", () => {
  assert.throws(() => defineTool(spec(z.string())), refused(/object schema/));
  assert.throws(() => defineTool(spec(z.array(z.number()))), refused(/object schema/));
  const tool = defineTool({
    name: "ok",
    description: "d",
    input: z.object({ a: z.string() }),
    execute: () => "ok",
  });
  assert.equal(tool.name, "ok");
});
