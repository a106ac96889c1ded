/**
 * A host process for tests/audit_lifecycle_leases.test.ts: on a shared libSQL
 * file, with its own hostId and a short lease, it runs `quick` short turns
 * back to back on one thread, stays idle for `idleMs` (long enough for the
 * lease timer to go idle), then starts a turn whose model never answers and
 * prints `ACK <json>` with that turn's id. It then waits to be killed.
 *
 * Usage: audit_lease_child.ts <json config>
 */
import { defineAgent, openHost } from "@floret/engine";
import { libsqlStore } from "@floret/engine/libsql";
import { scriptedGateway, type ScriptStep } from "@floret/engine/testing";

interface Config {
  url: string;
  hostId: string;
  leaseTtlMs: number;
  threadId: string;
  quick: number;
  idleMs: number;
}

const config = JSON.parse(process.argv.at(-1) as string) as Config;
// Bounded: a child the parent forgot still ends.
const watchdog = setTimeout(() => {
  console.error("audit_lease_child: watchdog expired");
  process.exit(3);
}, 60_000);

const steps: ScriptStep[] = Array.from(
  { length: config.quick },
  (_, i) => ({ text: `quick ${i}` }),
);
steps.push({ hang: true });
const host = await openHost({
  store: libsqlStore({ url: config.url }),
  hostId: config.hostId,
  leaseTtlMs: config.leaseTtlMs,
});
const threads = host.threads({
  agent: defineAgent({ id: "lease", systemPrompt: "Lease test.", gateway: scriptedGateway(steps) }),
});
const threadId = config.threadId;
for (let i = 0; i < config.quick; i++) {
  await threads.send({ threadId, requestKey: `quick-${i}`, input: { text: `quick ${i}` } });
  const view = await threads.waitForIdle(threadId, { timeoutMs: 20_000 });
  if (view.turns.at(-1)?.outcome !== "completed") throw new Error(JSON.stringify(view.turns));
}
await new Promise((resolve) => setTimeout(resolve, config.idleMs));
const long = await threads.send({ threadId, requestKey: "long", input: { text: "long" } });
console.log(`ACK ${JSON.stringify({ turnId: long.turnId, queued: long.queued })}`);
// The watchdog holds the process until the parent kills it.
void watchdog;
