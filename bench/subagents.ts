/**
 * Sub-agent costs with zero-latency scripted models, on memory and a libSQL file:
 *
 *  1. family: a lead spawns N children, waits for all with wait_agents and
 *     answers; ms per family (create → idle), median of RUNS.
 *  2. parentEvents: µs per step of a lead's STEPS-step turn that has K
 *     finished children, with parentEvents on and off (each step reads the
 *     children to find facts not yet admitted).
 *
 *   npx tsx bench/subagents.ts            (env RUNS=7 CHILDREN=8 STEPS=50)
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import {
  defineAgent,
  defineTool,
  type KvStore,
  memoryStore,
  openHost,
  type ProviderRequest,
} from "@floret/engine";
import { libsqlStore } from "@floret/engine/libsql";
import { type DynamicStep, scriptedGateway } from "@floret/engine/testing";

const RUNS = Number(process.env.RUNS ?? 7);
const CHILDREN = Number(process.env.CHILDREN ?? 8);
const STEPS = Number(process.env.STEPS ?? 50);

const spawned = (request: ProviderRequest): string[] =>
  request.messages.flatMap((m) =>
    m.role === "tool" && m.name === "spawn_agent" ? [JSON.parse(m.output).threadId] : []
  );

function worker() {
  const answer: DynamicStep = () => ({ text: "report" });
  return defineAgent({
    id: "worker",
    systemPrompt: "Work.",
    gateway: scriptedGateway(Array.from({ length: 100_000 }, () => answer)),
  });
}

const noop = defineTool({
  name: "noop",
  description: "Does nothing",
  input: z.object({ i: z.number() }),
  execute: () => "ok",
});

async function family(store: KvStore, n: number): Promise<number> {
  const host = await openHost({ store });
  const lead = defineAgent({
    id: "lead",
    systemPrompt: "Lead.",
    gateway: scriptedGateway([
      {
        toolCalls: Array.from({ length: n }, (_, i) => ({
          name: "spawn_agent",
          arguments: { agent: "worker", task: `task ${i}` },
        })),
      },
      (request) => ({
        toolCalls: [{ name: "wait_agents", arguments: { threadIds: spawned(request) } }],
      }),
      { text: "done" },
    ]),
    subagents: [worker()],
    subagentLimits: { maxLiveChildren: n },
  });
  const threads = host.threads({ agent: lead });
  const started = performance.now();
  const { threadId } = await threads.create({ requestKey: "c" });
  await threads.send({ threadId, requestKey: "s", input: { text: "go" } });
  const view = await threads.waitForIdle(threadId, { timeoutMs: 60_000 });
  const ms = performance.now() - started;
  if (view.items.at(-1)?.text !== "done") throw new Error("family did not finish");
  await host.shutdown();
  return ms;
}

async function eventSteps(store: KvStore, k: number, parentEvents: boolean): Promise<number> {
  const host = await openHost({ store });
  const lead = defineAgent({
    id: "lead",
    systemPrompt: "Lead.",
    gateway: scriptedGateway([
      ...(k > 0
        ? [{
          toolCalls: Array.from({ length: k }, (_, i) => ({
            name: "spawn_agent",
            arguments: { agent: "worker", task: `t${i}` },
          })),
        }, (request: ProviderRequest) => ({
          toolCalls: [{ name: "wait_agents", arguments: { threadIds: spawned(request) } }],
        })]
        : []),
      { text: "setup" },
      ...Array.from({ length: STEPS }, (_, i) => ({
        // Distinct arguments: identical calls in a row would trip the repetition guard.
        toolCalls: [{ name: "noop", arguments: { i } }],
      })),
      { text: "done" },
    ]),
    tools: [noop],
    subagents: [worker()],
    subagentLimits: { maxLiveChildren: Math.max(k, 1) },
    parentEvents,
    maxSteps: STEPS + 10,
  });
  const threads = host.threads({ agent: lead });
  const { threadId } = await threads.create({ requestKey: "c" });
  await threads.send({ threadId, requestKey: "s1", input: { text: "setup" } });
  await threads.waitForIdle(threadId, { timeoutMs: 60_000 });
  const started = performance.now();
  await threads.send({ threadId, requestKey: "s2", input: { text: "steps" } });
  const view = await threads.waitForIdle(threadId, { timeoutMs: 60_000 });
  const us = ((performance.now() - started) * 1000) / (STEPS + 1);
  if (view.items.at(-1)?.text !== "done") throw new Error("steps did not finish");
  await host.shutdown();
  return us;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

const dir = mkdtempSync(join(tmpdir(), "floret-bench-subagents-"));
let files = 0;
const stores: [string, () => KvStore][] = [
  ["memory", () => memoryStore()],
  ["libsql-file", () => libsqlStore({ url: `file:${join(dir, `b${files++}.db`)}` })],
];
try {
  for (const [name, open] of stores) {
    const runs: number[] = [];
    for (let i = 0; i < RUNS + 1; i++) {
      const ms = await family(open(), CHILDREN);
      if (i > 0) runs.push(ms); // the first run warms up
    }
    console.log(
      `family ${name} children=${CHILDREN}: median ${median(runs).toFixed(1)} ms (runs ${
        runs.map((r) => r.toFixed(1)).join(", ")
      })`,
    );
    for (const k of [0, 8, 64]) {
      for (const on of [false, true]) {
        const runsUs: number[] = [];
        for (let i = 0; i < Math.max(3, Math.floor(RUNS / 2)); i++) {
          runsUs.push(await eventSteps(open(), k, on));
        }
        console.log(
          `step ${name} children=${k} parentEvents=${on}: median ${
            median(runsUs).toFixed(0)
          } µs/step`,
        );
      }
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
