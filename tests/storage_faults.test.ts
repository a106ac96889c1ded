// Storage fault injection at every commit point x every fault kind, over the
// memory store (the matrix itself is tests/support/storage_faults.ts; the Deno
// KV run is storage_faults_deno_kv.test.ts).
import { memoryStore } from "@floret/engine";
import { storageFaultTest } from "./support/storage_faults.ts";

storageFaultTest("memory store", () => Promise.resolve(memoryStore()));
