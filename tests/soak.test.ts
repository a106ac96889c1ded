// The kill-soak in a short form (tests/support/soak.ts; the long form is
// `npm run soak -- --minutes N`): a host process is SIGKILLed at random moments
// while it runs tool conversations; after every restart and at the end no
// acknowledged send is lost, nothing is in the journal or ran twice, and the
// journal's invariants hold.
import { test } from "node:test";
import assert from "node:assert/strict";
import { runSoak } from "./support/soak.ts";

const SHORT_MS = 15_000;

test(
  "a host SIGKILLed again and again loses and repeats nothing",
  { timeout: 90_000 },
  async () => {
    const figures = await runSoak(SHORT_MS);
    const { problems, ...counts } = figures;
    console.log(`soak: ${JSON.stringify(counts)}`);
    assert.deepEqual(problems, []);
    assert.ok(figures.kills >= 2, `only ${figures.kills} kills`);
    assert.ok(figures.turnsAcknowledged > 0);
    assert.equal(figures.lostAcknowledged, 0);
    assert.equal(figures.duplicated, 0);
    assert.equal(figures.violations, 0);
    assert.ok(figures.turnsFound >= figures.turnsAcknowledged);
  },
);
