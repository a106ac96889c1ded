// The engine on a remote libSQL database (a local Hrana-over-HTTP server, as
// Turso speaks it): a tool conversation survives a restart, and each tool step
// costs exactly two round trips — its two commits, nothing else. The only
// other requests a run may make are the lease tick's one-key looks at the
// thread record (every 500 ms while a run lives, so their number depends on
// the machine's speed): they are told apart and checked, not counted.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defineAgent, openHost } from "@floret/engine";
import { libsqlStore } from "@floret/engine/libsql";
import { scriptedGateway, type ScriptStep } from "@floret/engine/testing";
import { type HranaServer, startHranaServer } from "./support/hrana_server.ts";
import { addTool } from "./support/engine.ts";
import { decodeKey } from "../src/spi/key_codec.ts";

const dir = mkdtempSync(join(tmpdir(), "floret-remote-"));
let server: HranaServer;
before(async () => {
  server = await startHranaServer(join(dir, "server"));
});
after(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

function toolSteps(n: number): ScriptStep[] {
  return [
    ...Array.from(
      { length: n },
      (_, i) => ({ toolCalls: [{ name: "add", arguments: { a: i, b: 1 } }] }),
    ),
    { text: `done after ${n}` },
  ];
}

/** Write round trips spent by one conversation of `n` tool steps on a warm host. */
async function requestsFor(n: number): Promise<number> {
  const url = server.newDatabaseUrl();
  const host = await openHost({ store: libsqlStore({ url }) });
  const threads = host.threads({
    agent: defineAgent({
      id: "remote",
      systemPrompt: "s",
      gateway: scriptedGateway(toolSteps(n)),
      tools: [addTool()],
    }),
  });
  const { threadId } = await threads.create({ requestKey: "c" });
  const before = server.writes;
  const readsBefore = server.reads.length;
  await threads.send({ threadId, requestKey: "s", input: { text: "count" } });
  const view = await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
  const spent = server.writes - before;
  assert.equal(view.items.at(-1)?.text, `done after ${n}`);
  // The send looks up its request key once; any other read is the lease tick's look
  // at this thread's record, one key.
  const reads = server.reads.slice(readsBefore).map((read) => read.map((b) => decodeKey(b)));
  const looks = reads.filter((keys) =>
    JSON.stringify(keys) !== JSON.stringify([["req", threadId, "s"]])
  );
  assert.equal(reads.length - looks.length, 1, JSON.stringify(reads));
  for (const keys of looks) assert.deepEqual(keys, [["thread", threadId]]);
  await host.shutdown();
  return spent;
}

test("each tool step costs exactly two round trips to a remote database", async () => {
  const two = await requestsFor(2);
  const six = await requestsFor(6);
  assert.equal(six - two, 2 * 4, `2 steps: ${two} requests, 6 steps: ${six}`);
});

test("a conversation on a remote database survives a restart of the host", async () => {
  const url = server.newDatabaseUrl();
  const agent = defineAgent({
    id: "remote",
    systemPrompt: "s",
    gateway: scriptedGateway(toolSteps(2)),
    tools: [addTool()],
  });
  const first = await openHost({ store: libsqlStore({ url }) });
  const threads = first.threads({ agent });
  const { threadId } = await threads.create({ requestKey: "c" });
  await threads.send({ threadId, requestKey: "s", input: { text: "count" } });
  const settled = await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
  await first.shutdown();
  const second = await openHost({ store: libsqlStore({ url }) });
  const again = await second.threads({ agent }).view(threadId);
  assert.deepEqual(again.items, settled.items);
  assert.deepEqual(again.turns, settled.turns);
  await second.shutdown();
});
