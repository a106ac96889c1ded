/**
 * The model-based conformance case: fast-check generates random sequences of
 * commits, reads and listings, and every answer of the store must match a
 * plain sorted array that follows the SPI's rules.
 *
 * @module
 */

import { test } from "node:test";
import assert from "node:assert/strict";
import type { Arbitrary } from "fast-check";
import type { KvKey, KvKeyPart, KvStore } from "../src/spi/kv_store.ts";
import { compareKey, keysOf, type KvHarness, showKey } from "./kv_reference.ts";
import { type FastCheck, loadFastCheck } from "./fast_check.ts";

interface ModelEntry {
  key: KvKey;
  value: number[];
  version: string;
}

type CheckMode = "none" | "current" | "stale" | "absent";

type Command =
  | { kind: "set"; keys: KvKey[]; value: number[]; check: CheckMode }
  | { kind: "delete"; key: KvKey; check: CheckMode }
  | { kind: "get"; keys: KvKey[] }
  | { kind: "list"; prefix: KvKey; reverse: boolean; limit?: number; afterFirst: boolean };

// Built once fast-check is loaded, inside the test: the package is an optional peer.
function commandArbitrary(fc: FastCheck): Arbitrary<Command> {
  const part: Arbitrary<KvKeyPart> = fc.constantFrom<KvKeyPart[]>(
    "",
    "a",
    "a\u0000",
    "b",
    0,
    -1,
    1.5,
    -Infinity,
    1n,
    -(2n ** 70n),
    false,
    true,
    new Uint8Array([0]),
    new Uint8Array([0xff]),
  );
  const key: Arbitrary<KvKey> = fc.array(part, { minLength: 1, maxLength: 3 });
  const check = fc.constantFrom<CheckMode[]>("none", "current", "stale", "absent");

  return fc.oneof(
    fc.record({
      kind: fc.constant("set" as const),
      keys: fc.uniqueArray(key, {
        minLength: 1,
        maxLength: 3,
        comparator: (a, b) => compareKey(a, b) === 0,
      }),
      value: fc.array(fc.integer({ min: 0, max: 255 }), { maxLength: 4 }),
      check,
    }),
    fc.record({ kind: fc.constant("delete" as const), key, check }),
    fc.record({ kind: fc.constant("get" as const), keys: fc.array(key, { maxLength: 3 }) }),
    fc.record({
      kind: fc.constant("list" as const),
      prefix: fc.array(part, { maxLength: 1 }),
      reverse: fc.boolean(),
      limit: fc.option(fc.integer({ min: 0, max: 4 }), { nil: undefined }),
      afterFirst: fc.boolean(),
    }),
  );
}

class Model {
  entries: ModelEntry[] = [];
  seen: string[] = [];

  find(k: KvKey): ModelEntry | undefined {
    return this.entries.find((entry) => compareKey(entry.key, k) === 0);
  }

  expectedVersion(k: KvKey, mode: CheckMode): string | null | undefined {
    const current = this.find(k)?.version ?? null;
    if (mode === "none") return undefined;
    if (mode === "current") return current;
    if (mode === "absent") return null;
    return this.seen.find((version) => version !== current) ?? "stale";
  }

  write(k: KvKey, value: number[] | null, version: string): void {
    this.entries = this.entries.filter((entry) => compareKey(entry.key, k) !== 0);
    if (value) this.entries.push({ key: k, value, version });
    this.entries.sort((a, b) => compareKey(a.key, b.key));
  }

  list(prefix: KvKey): ModelEntry[] {
    return this.entries.filter((entry) =>
      entry.key.length > prefix.length &&
      compareKey(entry.key.slice(0, prefix.length), prefix) === 0
    );
  }
}

async function apply(store: KvStore, model: Model, cmd: Command): Promise<void> {
  if (cmd.kind === "set" || cmd.kind === "delete") {
    const target = cmd.kind === "set" ? cmd.keys[0] : cmd.key;
    const expected = model.expectedVersion(target, cmd.check);
    const checks = expected === undefined ? [] : [{ key: target, version: expected }];
    const holds = expected === undefined || expected === (model.find(target)?.version ?? null);
    const result = cmd.kind === "set"
      ? await store.commit({
        checks,
        set: cmd.keys.map((k) => ({ key: k, value: new Uint8Array(cmd.value) })),
      })
      : await store.commit({ checks, delete: [cmd.key] });
    assert.equal(result.ok, holds, `commit outcome for ${showKey(target)}`);
    if (!result.ok) return;
    assert.ok(model.seen.every((version) => result.version > version), "versions grow");
    model.seen.push(result.version);
    if (cmd.kind === "set") { for (const k of cmd.keys) model.write(k, cmd.value, result.version); }
    else model.write(cmd.key, null, result.version);
  } else if (cmd.kind === "get") {
    const got = await store.getMany(cmd.keys);
    const want = cmd.keys.map((k) => model.find(k) ?? null);
    assert.deepEqual(keysOf(got), keysOf(want));
    got.forEach((entry, i) => {
      assert.equal(entry?.version, want[i]?.version);
      assert.deepEqual(entry ? Array.from(entry.value) : null, want[i]?.value ?? null);
    });
  } else {
    let want = model.list(cmd.prefix);
    if (cmd.reverse) want.reverse();
    const after = cmd.afterFirst && want.length > 0 ? want[0].key : undefined;
    if (after) want = want.slice(1);
    if (cmd.limit !== undefined) want = want.slice(0, cmd.limit);
    const got = await store.list({ prefix: cmd.prefix }, {
      reverse: cmd.reverse,
      limit: cmd.limit,
      after,
    });
    assert.deepEqual(keysOf(got), keysOf(want));
    assert.deepEqual(got.map((entry) => entry.version), want.map((entry) => entry.version));
  }
}

/**
 * Registers the model-based case.
 *
 * @param h the harness
 */
export function modelCases(h: KvHarness): void {
  test(
    "random command sequences match a reference model",
    { timeout: h.options.timeoutMs * 4 },
    async () => {
      const fc = await loadFastCheck();
      const command = commandArbitrary(fc);
      await fc.assert(
        fc.asyncProperty(fc.array(command, { maxLength: 30 }), async (commands) => {
          await h.withStore(async (store) => {
            const model = new Model();
            for (const cmd of commands) await apply(store, model, cmd);
            assert.deepEqual(keysOf(await store.list({ prefix: [] })), keysOf(model.entries));
          });
        }),
        { numRuns: h.options.modelRuns },
      );
    },
  );
}
