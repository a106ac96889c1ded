/**
 * The shared contract test of the {@link KvStore} SPI. Every adapter's test
 * file is a few lines that call {@link kvConformance} with a factory; the
 * in-memory adapter is the reference and passes all of it.
 *
 * @module
 */

import { describe } from "node:test";
import type { KvStore } from "../src/spi/kv_store.ts";
import { commitCases } from "./kv_cases_commit.ts";
import { modelCases } from "./kv_cases_model.ts";
import { orderCases } from "./kv_cases_order.ts";
import type { KvConformanceOptions, KvHarness } from "./kv_reference.ts";

export type { KvConformanceOptions } from "./kv_reference.ts";

/**
 * Registers `node:test` cases (runnable under `node --test`, `deno test` and
 * `bun test`) that check a store factory against the SPI contract: ordering
 * across types, prefix/range/reverse/limit/`after` paging, check semantics,
 * atomicity, racing committers, large values, invalid input, close and
 * reopen (when `options.reopen` is given) and a model-based random test.
 * Each case opens a fresh store and closes it afterwards. The random cases
 * need the optional peer `fast-check` (`npm install -D fast-check`).
 *
 * @param name the suite name, usually the adapter's
 * @param open returns a fresh, empty store on every call
 * @param options `reopen` for persistent adapters, sizes and run counts
 * @example
 * ```ts ignore
 * import { memoryStore } from "@floret/engine";
 * import { kvConformance } from "@floret/engine/testing";
 * kvConformance("memoryStore", () => memoryStore());
 * ```
 */
export function kvConformance(
  name: string,
  open: () => Promise<KvStore> | KvStore,
  options: KvConformanceOptions = {},
): void {
  const harness: KvHarness = {
    open: async () => await open(),
    async withStore(body) {
      const store = await open();
      try {
        await body(store);
      } finally {
        await store.close();
      }
    },
    options: {
      reopen: options.reopen,
      largeValueBytes: options.largeValueBytes ?? 5 * 1024 * 1024,
      modelRuns: options.modelRuns ?? 25,
      timeoutMs: options.timeoutMs ?? 60_000,
    },
  };
  describe(`KvStore conformance: ${name}`, () => {
    orderCases(harness);
    commitCases(harness);
    modelCases(harness);
  });
}
