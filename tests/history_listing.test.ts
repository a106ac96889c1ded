/**
 * `HistoryModel.messages` keeps the listed messages of settled exchanges and
 * appends only what is new. Whatever the order of entries — late tool results
 * for an earlier exchange's batch, steering, a regenerate, a compaction, two
 * state keys asked in turn — the list must equal the one a fresh model builds
 * from the same entries, after every entry.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { HistoryModel } from "../src/projection/history/history_model.ts";
import type { Entry } from "../src/journal/entries.ts";
import { roughCounter } from "../src/context/token_counter.ts";
import { canonicalJson } from "../src/identity/canonical_json.ts";
import { sha256Hex } from "../src/identity/fingerprint.ts";
import { freezeRequest, projectRequest } from "../src/engine/attempt/request_builder.ts";
import type { ProviderMessage, ProviderRequest } from "../src/provider/gateway.ts";
import { defineAgent } from "@floret/engine";
import { scriptedGateway } from "@floret/engine/testing";

const at = "2026-12-01T00:00:00.000Z";
let seq = 0;
const base = (turnId: string) => ({ seq: ++seq, at, turnId });

const started = (turnId: string, text?: string, retryOf?: "resume" | "regenerate"): Entry =>
  ({
    ...base(turnId),
    kind: "turn_started",
    runId: `run-${turnId}`,
    agentId: "a",
    requestKey: `rk-${turnId}`,
    ...(text === undefined ? {} : { input: { text } }),
    ...(retryOf ? { retryOf: { turnId: "t1", mode: retryOf } } : {}),
  }) as Entry;

const step = (turnId: string, text: string, callIds: string[] = [], stateKey = "k1"): Entry =>
  ({
    ...base(turnId),
    kind: "step",
    runId: `run-${turnId}`,
    step: 0,
    text,
    calls: callIds.map((callId) => ({
      callId,
      name: "add",
      arguments: "{}",
      decision: "allow",
    })),
    finish: callIds.length ? "tool_calls" : "stop",
    state: { opaque: text },
    stateKey,
    usage: { inputTokens: seq, outputTokens: 1 },
  }) as Entry;

const results = (turnId: string, callIds: string[]): Entry =>
  ({
    ...base(turnId),
    kind: "tool_results",
    runId: `run-${turnId}`,
    results: callIds.map((callId) => ({
      callId,
      name: "add",
      status: "completed",
      output: `out-${callId}`,
    })),
  }) as Entry;

const steer = (turnId: string, text: string): Entry =>
  ({ ...base(turnId), kind: "steer", steerId: `s${seq}`, text }) as Entry;

const ended = (turnId: string): Entry =>
  ({ ...base(turnId), kind: "turn_ended", outcome: "completed" }) as Entry;

/** Late tool results, steering, a regenerate, two state keys and a compaction, in that order. */
function mixedEntries(): Entry[] {
  seq = 0;
  const entries: Entry[] = [
    started("t1", "first"),
    step("t1", "calling", ["c1", "c2"]),
    results("t1", ["c2"]),
    steer("t1", "steered while the batch is open"),
    results("t1", ["c1"]),
    step("t1", "answer one"),
    ended("t1"),
    started("t2", "second"),
    step("t2", "calling late", ["c3", "c4"], "k2"),
    results("t2", ["c3"]),
    ended("t2"),
    started("t3", "third"),
    step("t3", "three"),
    // A result for t2's batch lands after t3 began: an exchange already listed changes.
    results("t2", ["c4"]),
    ended("t3"),
    started("t4", undefined, "regenerate"),
    step("t4", "regenerated three"),
    ended("t4"),
    started("t5", "fifth"),
    step("t5", "five"),
  ];
  const compaction = (cutSeq: number): Entry =>
    ({
      ...base("t5"),
      kind: "compaction",
      operationId: "op",
      trigger: "manual",
      status: "compacted",
      tokensBefore: 100,
      summary: "summary",
      cutSeq,
      keptInputs: [],
    }) as Entry;
  entries.push(compaction(entries[11].seq), ended("t5"), started("t6", "sixth"), step("t6", "six"));

  return entries;
}

function listed(model: HistoryModel, key: string): string[] {
  return model.messages(key).map((m) => m.json);
}

test("the listed history equals a fresh listing after every entry", () => {
  const entries = mixedEntries();
  const live = new HistoryModel();
  for (let i = 0; i < entries.length; i++) {
    live.apply(entries[i]);
    const fresh = new HistoryModel();
    for (const entry of entries.slice(0, i + 1)) fresh.apply(entry);
    for (const key of ["k1", "k2", ""]) {
      assert.deepEqual(listed(live, key), listed(fresh, key), `after entry ${i}, key ${key}`);
      // The settled figures describe the leading messages of that list.
      const messages = live.messages(key);
      const settled = live.settled(key, roughCounter);
      assert.ok(settled.count <= messages.length);
      const head = messages.slice(0, settled.count);
      assert.equal(settled.tokens, head.reduce((sum, m) => sum + m.tokens, 0));
      assert.equal(settled.maxSeq, Math.max(0, ...head.map((m) => m.seq ?? 0)));
    }
  }
  const last = listed(live, "k1");
  assert.ok(last[0].includes("summary"), "the checkpoint leads after the compaction");
  assert.ok(!last.some((json) => json.includes("first")), "the cut drops what came before it");
  // The late result of t2's batch is in the list, right after its call, before t3.
  const fresh = new HistoryModel();
  for (const entry of entries.slice(0, 14)) fresh.apply(entry);
  const before = listed(fresh, "k2");
  const c4 = before.findIndex((json) => json.includes("out-c4"));
  assert.ok(c4 > before.findIndex((json) => json.includes("out-c3")));
  assert.ok(c4 < before.findIndex((json) => json.includes("third")));
});

test("a supplemental message follows the current input and is never kept", () => {
  seq = 0;
  const model = new HistoryModel();
  for (const entry of [started("t1", "one"), step("t1", "a1"), ended("t1"), started("t2", "two")]) {
    model.apply(entry);
  }
  const extra = new HistoryModel();
  extra.apply(started("x", "supplemental"));
  const supplemental = extra.messages("k1")[0];
  const withIt = model.messages("k1", supplemental).map((m) => m.json);
  assert.equal(withIt.at(-1), supplemental.json);
  assert.equal(withIt.at(-2), model.messages("k1").at(-1)!.json);
  assert.equal(model.messages("k1").length, withIt.length - 1);
});

test("a request holds the system message and every listed message, byte for byte, and keeps them", async () => {
  const entries = mixedEntries();
  const secretAnswer: ProviderMessage = { role: "user", text: "never fingerprinted" };
  const live = new HistoryModel();
  const kept: { request: ProviderRequest; messages: ProviderMessage[]; json: string }[] = [];
  for (let i = 0; i < entries.length; i++) {
    live.apply(entries[i]);
    for (const key of ["k1", "k2", ""]) {
      const gateway = scriptedGateway([], { stateKey: key });
      const agent = defineAgent({ id: "a", systemPrompt: "System.", gateway });
      const projection = projectRequest(agent, live);
      const listed = live.messages(key);
      assert.deepEqual(projection.messages, listed, `projection after entry ${i}, key ${key}`);
      const expected = [
        { role: "system", text: "System." } as ProviderMessage,
        ...listed.map((m) => m.message),
      ];
      const request = await freezeRequest(agent, projection.listing, "thread", 64);
      assert.equal(request.messages.length, expected.length);
      assert.deepEqual(request.messages, expected, `request after entry ${i}, key ${key}`);
      const json = canonicalJson({ maxOutputTokens: 64, messages: expected, tools: request.tools });
      assert.equal(request.fingerprint, await sha256Hex(json), `fingerprint after entry ${i}`);
      kept.push({ request, messages: [...request.messages], json });
      // A secret replaces its message in what is sent, never in the fingerprint.
      const withSecret = listed.findIndex((m) => m.seq !== undefined);
      if (withSecret >= 0) {
        Object.defineProperty(listed[withSecret], "interactionId", { value: "i1" });
        const secretRequest = await freezeRequest(
          agent,
          projectRequest(agent, live).listing,
          "thread",
          64,
          new Map([["i1", secretAnswer]]),
        );
        assert.equal(secretRequest.messages[withSecret + 1], secretAnswer);
        assert.equal(secretRequest.fingerprint, await sha256Hex(json));
        Object.defineProperty(listed[withSecret], "interactionId", { value: undefined });
      }
    }
  }
  // Later entries (more settled exchanges, a compaction) change no earlier request.
  for (const { request, messages, json } of kept) {
    assert.deepEqual(request.messages, messages);
    assert.equal(request.fingerprint, await sha256Hex(json));
  }
});
