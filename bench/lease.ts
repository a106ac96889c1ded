/**
 * What the multi-host lease costs per tool step. The lease lives in the
 * thread record: the admission stamps owner and expiry, and while a run lives
 * a timer re-commits the record every third of the lease. Tool steps append
 * entries without rewriting the record, so a step pays for the lease only
 * when a renewal falls inside it.
 *
 * Measures, on a libSQL file (adapter default synchronous=FULL), a turn of
 * N zero-latency tool steps: commits per step and µs per step with the default
 * 30 s lease (no renewal fits in such a turn) and with the shortest lease
 * (30 ms: a renewal every 10 ms), and the renewals committed while one tool
 * call sleeps for a second under a 300 ms lease.
 *
 * Run: `npx tsx bench/lease.ts [--steps N]` (also `deno run -A`, `bun`).
 *
 * @module
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defineAgent, openHost } from "@floret/engine";
import { libsqlStore } from "@floret/engine/libsql";
import { conversationGateway, recordTool } from "../tests/support/conversation_gateway.ts";
import { faultyStore } from "../tests/support/faulty_store.ts";

const flag = process.argv.indexOf("--steps");
const STEPS = flag >= 0 ? Number(process.argv[flag + 1]) : 200;
const dir = mkdtempSync(join(tmpdir(), "floret-lease-"));

/** One turn of `steps` tool calls; returns commits and wall time of the turn alone. */
async function turn(
  name: string,
  options: { leaseTtlMs: number; steps: number; toolMs?: number },
): Promise<{ commits: number; ms: number }> {
  const store = faultyStore(libsqlStore({ url: `file:${join(dir, `${name}.db`)}` }), {
    failAt: 0,
    kind: "throw",
  });
  const host = await openHost({ store, hostId: "bench-host", leaseTtlMs: options.leaseTtlMs });
  const threads = host.threads({
    agent: defineAgent({
      id: "lease",
      systemPrompt: "Lease bench.",
      gateway: conversationGateway(),
      tools: [
        recordTool(() =>
          options.toolMs ? new Promise((resolve) => setTimeout(resolve, options.toolMs)) : undefined
        ),
      ],
      maxSteps: options.steps + 2,
    }),
  });
  const { threadId } = await threads.create({ requestKey: "c" });
  const before = store.commits;
  const started = performance.now();
  await threads.send({ threadId, requestKey: "s", input: { text: `tools:${options.steps} go` } });
  const view = await threads.waitForIdle(threadId, { timeoutMs: 600_000 });
  const ms = performance.now() - started;
  if (view.turns.at(-1)?.outcome !== "completed") throw new Error(`${name}: turn did not complete`);
  const commits = store.commits - before;
  await host.shutdown();
  return { commits, ms };
}

const runtime = "Deno" in globalThis ? "deno" : "Bun" in globalThis ? "bun" : "node";
try {
  await turn("warmup", { leaseTtlMs: 30_000, steps: 20 });
  for (
    const [label, leaseTtlMs] of [["default lease 30 s", 30_000], ["lease 30 ms", 30]] as const
  ) {
    const { commits, ms } = await turn(label.replace(/\W/g, "_"), { leaseTtlMs, steps: STEPS });
    console.log(
      `${runtime} ${label}: ${STEPS} steps, ${commits} commits (${
        (commits / STEPS).toFixed(2)
      }/step), ${((ms * 1000) / STEPS).toFixed(0)} µs/step`,
    );
  }
  const slow = await turn("slow_tool", { leaseTtlMs: 300, steps: 1, toolMs: 1_000 });
  console.log(
    `${runtime} one 1 s tool call under a 300 ms lease: ${slow.commits} commits in the turn (${
      slow.commits - 4
    } beyond admission, step, results and final step)`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
