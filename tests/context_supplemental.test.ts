/**
 * Supplemental context reaches only its own turn's requests (tool-loop steps
 * included) and never the store: raw-bytes scans of memory store values and
 * of the libSQL database files, for a direct and a queued send.
 */
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defineAgent, type KvStore, memoryStore, openHost } from "@floret/engine";
import { libsqlStore } from "@floret/engine/libsql";
import { type ScriptedGateway, scriptedGateway } from "@floret/engine/testing";
import { addTool } from "./support/engine.ts";

const dir = mkdtempSync(join(tmpdir(), "floret-supplemental-"));
after(() => rmSync(dir, { recursive: true, force: true }));

const DIRECT = "SUPPLEMENT-DIRECT-7f3a";
const QUEUED = "SUPPLEMENT-QUEUED-91bc";

/** Runs a direct send (with a tool step) and a queued send, both with supplemental context. */
async function conversation(store: KvStore): Promise<ScriptedGateway> {
  const gateway = scriptedGateway([
    { toolCalls: [{ name: "add", arguments: { a: 1, b: 2 } }], delayMs: 60 },
    { text: "three" },
    { text: "queued answer" },
    { text: "later answer" },
  ]);
  const host = await openHost({ store });
  const threads = host.threads({
    agent: defineAgent({ id: "a", systemPrompt: "S", gateway, tools: [addTool()] }),
  });
  const { threadId } = await threads.create({ requestKey: "create" });
  await threads.send({
    threadId,
    requestKey: "direct",
    input: { text: "add 1 and 2" },
    supplementalContext: [{ title: "Editor", text: DIRECT }],
  });
  const queued = await threads.send({
    threadId,
    requestKey: "queued",
    input: { text: "and then?" },
    supplementalContext: [{ title: "Editor", text: QUEUED }],
  });
  assert.equal(queued.queued, true);
  await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
  while ((await threads.view(threadId)).turns.length < 2) {
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
  await threads.send({ threadId, requestKey: "later", input: { text: "later" } });
  await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
  // Same key, other supplemental context: a replay, since it is not part of the fingerprint.
  const replay = await threads.send({
    threadId,
    requestKey: "direct",
    input: { text: "add 1 and 2" },
    supplementalContext: [{ title: "Editor", text: "something else" }],
  });
  assert.equal(replay.queued, false);
  await host.shutdown();
  return gateway;
}

function checkRequests(gateway: ScriptedGateway): void {
  const texts = gateway.requests.map((request) =>
    request.messages.map((m) => ("text" in m ? m.text : m.output)).join("\n")
  );
  assert.equal(texts.length, 4);
  // Both steps of the direct turn carry it, right after the user input.
  for (const index of [0, 1]) {
    assert.match(texts[index], new RegExp(DIRECT));
    const messages = gateway.requests[index].messages;
    assert.equal((messages[1] as { text: string }).text, "add 1 and 2");
    assert.match((messages[2] as { text: string }).text, new RegExp(DIRECT));
    assert.doesNotMatch(texts[index], new RegExp(QUEUED));
  }
  assert.match(texts[2], new RegExp(QUEUED), "the queued turn gets its own context");
  assert.doesNotMatch(texts[2], new RegExp(DIRECT));
  assert.doesNotMatch(texts[3], new RegExp(`${DIRECT}|${QUEUED}`), "no later turn sees either");
}

describe("supplemental context", () => {
  test("memory store: no stored value contains it", async () => {
    const store = memoryStore();
    const keepOpen = { ...store, close: () => Promise.resolve() };
    const gateway = await conversation(keepOpen);
    checkRequests(gateway);
    const entries = await store.list({ prefix: [] });
    assert.ok(entries.length > 5);
    const all = entries.map((entry) => new TextDecoder("latin1").decode(entry.value)).join("");
    assert.ok(all.includes("add 1 and 2"), "the scan can see stored text");
    const decoder = new TextDecoder("latin1");
    for (const entry of entries) {
      const text = decoder.decode(entry.value) + JSON.stringify(entry.key);
      assert.doesNotMatch(text, /SUPPLEMENT-/);
    }
    await store.close();
  });

  test("libSQL file: no byte of the database files contains it", async () => {
    const path = join(dir, "supplemental.db");
    const gateway = await conversation(libsqlStore({ url: `file:${path}` }));
    checkRequests(gateway);
    const files = readdirSync(dir);
    assert.ok(files.includes("supplemental.db"));
    let seen = false; // the scan can see stored text at all (main file or write-ahead log)
    for (const file of files) {
      const bytes = readFileSync(join(dir, file)).toString("latin1");
      assert.ok(!bytes.includes("SUPPLEMENT-"), `${file} contains supplemental context`);
      seen ||= bytes.includes("add 1 and 2");
    }
    assert.ok(seen, "the user input is stored in plain text somewhere");
  });
});
