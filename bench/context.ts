/**
 * Does building a request cost more as history grows, and does a compaction
 * checkpoint bring it back down? Builds the provider history of a thread from
 * journal entries (user message + assistant answer per turn, about 60 words
 * each), then times the per-step request building of the run loop:
 * `projectRequest` (projection and token estimate) plus `freezeRequest` with
 * the fingerprint read (canonical JSON and SHA-256 of the whole request).
 *
 * Cases: 100 messages; 10,000 messages; 10,000 messages with a compaction
 * checkpoint that keeps the last 100 (plus the summary message).
 *
 * Run: `node --import tsx bench/context.ts` (or `bun bench/context.ts`,
 * `deno run -A bench/context.ts`). Env: ROUNDS (default 200).
 *
 * @module
 */
import { defineAgent } from "@floret/engine";
import { scriptedGateway } from "@floret/engine/testing";
import type { Entry } from "../src/journal/entries.ts";
import { HistoryModel } from "../src/projection/history/history_model.ts";
import { freezeRequest, projectRequest } from "../src/engine/attempt/request_builder.ts";

const ROUNDS = Number(globalThis.process?.env?.ROUNDS ?? 200);
const agent = defineAgent({
  id: "bench",
  systemPrompt: "You are a helpful assistant.",
  gateway: scriptedGateway([], { capabilities: { contextWindowTokens: 10_000_000 } }),
});
const sentence = "the quick brown fox jumps over the lazy dog and keeps running ";
const at = new Date().toISOString();

/** A history of `messages` messages (half user, half assistant), optionally with a checkpoint. */
function history(messages: number, keep?: number): HistoryModel {
  const model = new HistoryModel();
  let seq = 0;
  for (let turn = 0; turn < messages / 2; turn++) {
    const turnId = `turn_${turn}`;
    const entries: Entry[] = [
      {
        kind: "turn_started",
        seq: ++seq,
        at,
        turnId,
        runId: `run_${turn}`,
        agentId: "bench",
        requestKey: `k${turn}`,
        input: { text: `question ${turn}: ${sentence.repeat(5)}` },
      },
      {
        kind: "step",
        seq: ++seq,
        at,
        turnId,
        runId: `run_${turn}`,
        step: 0,
        text: `answer ${turn}: ${sentence.repeat(5)}`,
        calls: [],
        finish: "stop",
        stateKey: "scripted:scripted-model",
      },
      { kind: "turn_ended", seq: ++seq, at, turnId, runId: `run_${turn}`, outcome: "completed" },
    ];
    for (const entry of entries) model.apply(entry);
  }
  if (keep !== undefined) {
    // Turn t's user message has seq 3t + 1: keep the last `keep` messages.
    const firstKeptTurn = messages / 2 - keep / 2;
    model.apply({
      kind: "compaction",
      seq: ++seq,
      at,
      turnId: `turn_${messages / 2 - 1}`,
      operationId: "compaction_bench",
      trigger: "threshold",
      status: "compacted",
      tokensBefore: 0,
      tokensAfter: 0,
      summary: sentence.repeat(40),
      cutSeq: 3 * firstKeptTurn + 1,
    });
  }
  return model;
}

async function build(model: HistoryModel): Promise<number> {
  const projection = projectRequest(agent, model);
  const { listing } = projection;
  const request = await freezeRequest(agent, listing, "thread_bench", undefined);
  return request.fingerprint.length + listing.count + listing.tail.length;
}

async function measure(label: string, model: HistoryModel): Promise<number> {
  const sent = projectRequest(agent, model).messages.length;
  for (let i = 0; i < 20; i++) await build(model); // warm-up (fills the per-message caches)
  const times: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const start = performance.now();
    await build(model);
    times.push((performance.now() - start) * 1000);
  }
  times.sort((a, b) => a - b);
  const median = times[Math.floor(times.length / 2)];
  console.log(
    `${label.padEnd(42)} messages sent ${String(sent).padStart(6)}  ` +
      `median ${median.toFixed(1).padStart(9)} µs  p90 ${
        times[Math.floor(times.length * 0.9)].toFixed(1).padStart(9)
      } µs`,
  );
  return median;
}

const small = await measure("100 messages", history(100));
const large = await measure("10,000 messages, no checkpoint", history(10_000));
const compacted = await measure("10,000 messages, checkpoint keeps last 100", history(10_000, 100));
console.log(
  `ratio vs 100 messages: no checkpoint ${(large / small).toFixed(2)}×, ` +
    `with checkpoint ${(compacted / small).toFixed(2)}× (target ≤ 2×)`,
);
