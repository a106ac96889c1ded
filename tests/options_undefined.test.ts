// At run time too, every public option left `undefined` (an unset environment
// variable) means its default: nothing is refused for an explicit undefined.
// The type side is tests/types/options_undefined.ts.
import { test } from "node:test";
import assert from "node:assert/strict";
import { optionsTakeUndefined } from "./types/options_undefined.ts";

test("every public option shape accepts undefined fields and builds", async () => {
  const host = await optionsTakeUndefined({
    OPENAI_API_KEY: "sk-test",
    ANTHROPIC_API_KEY: "sk-test",
    BRAVE_API_KEY: "brave-test",
  });
  try {
    assert.equal(typeof host.threads, "function");
  } finally {
    await host.shutdown();
  }
});
