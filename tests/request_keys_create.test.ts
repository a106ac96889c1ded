import { test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { Journal } from "../src/journal/journal.ts";
import { STORE_SCOPE } from "../src/journal/keys.ts";
import { engine } from "./support/engine.ts";

// The untitled create's fingerprint is taken once per process: it must stay
// the SHA-256 of the canonical input `{"title":null}` that every create
// recorded before, or replays against older stores would become conflicts.
test("create's request record: untitled and titled fingerprints, replay and conflicts", async () => {
  const { host, threads, store } = await engine([]);
  const sha = (text: string): string => createHash("sha256").update(text).digest("hex");

  const first = await threads.create({ requestKey: "a" });
  const second = await threads.create({ requestKey: "b" });
  const titled = await threads.create({ requestKey: "c", title: "Plans" });
  assert.notEqual(first.threadId, second.threadId);

  const journal = await Journal.open(store);
  for (const key of ["a", "b"]) {
    const record = await journal.request(STORE_SCOPE, key);
    assert.equal(record?.op, "create");
    assert.equal(record?.fingerprint, sha('{"title":null}'));
  }
  assert.equal(
    (await journal.request(STORE_SCOPE, "c"))?.fingerprint,
    sha('{"title":"Plans"}'),
  );

  assert.equal((await threads.create({ requestKey: "a" })).threadId, first.threadId);
  assert.equal(
    (await threads.create({ requestKey: "c", title: "Plans" })).threadId,
    titled.threadId,
  );
  await assert.rejects(threads.create({ requestKey: "a", title: "Plans" }), {
    code: "request_conflict",
  });
  await assert.rejects(threads.create({ requestKey: "c" }), { code: "request_conflict" });
  await host.shutdown();
});
