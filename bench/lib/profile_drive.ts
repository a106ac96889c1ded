/**
 * A steady-state driver for CPU profiles of the overhead workload: the same
 * conversations as `bench/overhead.ts` (create + send + waitForIdle, the
 * scripted `add` gateway), run in rounds on a fresh store each, so a long
 * profile sees the benchmark's steady state (a small store) rather than a
 * store that grows for the whole profile. The first 3 rounds are warm-up;
 * it prints µs per step of the rest.
 *
 * Run: `node --cpu-prof --cpu-prof-dir=D --import tsx bench/lib/profile_drive.ts`
 * (env N=10, ROUNDS=30, CONVS=300 per round, CONC=1 conversations at once,
 * VARIANT=memory|libsql-normal), then `npx tsx bench/lib/profile_top.ts` on
 * the largest profile in D.
 *
 * @module
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type KvStore, memoryStore, openHost } from "@floret/engine";
import { libsqlStore } from "@floret/engine/libsql";
import { USER_PROMPT } from "./script.mjs";
import { counterAgent } from "./workload.ts";

const env = (name: string, fallback: number): number => Number(process.env[name] ?? fallback);
const N = env("N", 10);
const ROUNDS = env("ROUNDS", 30);
const CONVS = env("CONVS", 300);
const CONC = env("CONC", 1);
const VARIANT = process.env.VARIANT ?? "memory";

/** A fresh store for one round, and how to remove it afterwards. */
function freshStore(): { store: KvStore; remove(): void } {
  if (VARIANT === "memory") return { store: memoryStore(), remove: () => {} };
  if (VARIANT !== "libsql-normal") throw new Error(`unknown VARIANT ${VARIANT}`);
  const dir = mkdtempSync(join(tmpdir(), "floret-profile-"));
  return {
    store: libsqlStore({ url: `file:${join(dir, "p.db")}`, synchronous: "normal" }),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

let measuredMs = 0;
let measuredSteps = 0;
for (let round = 0; round < ROUNDS; round++) {
  const { store, remove } = freshStore();
  const host = await openHost({ store });
  const threads = host.threads({ agent: counterAgent("counter", N) });
  const conversation = async (id: string): Promise<void> => {
    const { threadId } = await threads.create({ requestKey: `${id}:create` });
    await threads.send({ threadId, requestKey: `${id}:send`, input: { text: USER_PROMPT } });
    await threads.waitForIdle(threadId);
  };
  const started = performance.now();
  for (let batch = 0; batch < CONVS / CONC; batch++) {
    const ids = Array.from({ length: CONC }, (_, i) => `r${round}b${batch}c${i}`);
    await Promise.all(ids.map(conversation));
  }
  if (round >= 3) {
    measuredMs += performance.now() - started;
    measuredSteps += CONVS * N;
  }
  await host.shutdown();
  await store.close();
  remove();
}
console.log(
  `${VARIANT} N=${N} CONC=${CONC}: ${(1000 * measuredMs / measuredSteps).toFixed(1)} µs per step`,
);
