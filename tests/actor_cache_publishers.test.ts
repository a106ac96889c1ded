/**
 * A subscription to an id that names no thread leaves nothing behind in the
 * host's actor cache: any HTTP client can send such ids
 * (`GET /threads/<anything>/events` answers 404), and each used to keep a
 * publisher for the life of the process.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { isFloretError, memoryStore } from "@floret/engine";
import { Journal } from "../src/journal/journal.ts";
import { ActorCache } from "../src/runtime/turns/actor_cache.ts";

const ownership = { hostId: "h", leaseTtlMs: 30_000 };

test("dropUnobserved drops the publisher a subscription to a missing thread made", async () => {
  const cache = new ActorCache(await Journal.open(memoryStore()), ownership);
  const publisher = cache.publisher("thread_missing");
  const updates = publisher.subscribe();
  await assert.rejects(cache.get("thread_missing"), (e) => isFloretError(e, "thread_not_found"));
  // Still subscribed: kept, so a subscriber that registered first is not cut off.
  cache.dropUnobserved("thread_missing");
  assert.equal(cache.publisher("thread_missing"), publisher);
  await updates.return?.();
  cache.dropUnobserved("thread_missing");
  assert.notEqual(
    cache.publisher("thread_missing"),
    publisher,
    "a new publisher: the old one went",
  );
});
