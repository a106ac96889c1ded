/**
 * The kill-soak's short form as a test, one per store: tests/soak.test.ts
 * (libSQL) and tests/soak_deno_kv.test.ts (Deno KV) register it with their
 * backend, so both make the same checks and print the same counts.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { runSoak, type SoakStore } from "./soak.ts";

/** How long the short form keeps killing hosts (the long form is `npm run soak`). */
const SHORT_MS = 15_000;

/**
 * Registers the short kill-soak over `store`.
 *
 * @param label names the store in the test name and the printed counts
 * @param options `skip` (a reason) where the store does not exist
 */
export function soakTest(
  label: string,
  store: SoakStore,
  options: { skip?: string | false } = {},
): void {
  test(
    `${label}: a host SIGKILLed again and again loses and repeats nothing`,
    { skip: options.skip ?? false, timeout: 90_000 },
    async () => {
      const figures = await runSoak(SHORT_MS, { store });
      const { problems, ...counts } = figures;
      console.log(`soak (${label}): ${JSON.stringify(counts)}`);
      assert.deepEqual(problems, []);
      assert.ok(figures.kills >= 2, `only ${figures.kills} kills`);
      assert.ok(figures.turnsAcknowledged > 0);
      assert.equal(figures.lostAcknowledged, 0);
      assert.equal(figures.duplicated, 0);
      assert.equal(figures.violations, 0);
      assert.ok(figures.turnsFound >= figures.turnsAcknowledged);
    },
  );
}
