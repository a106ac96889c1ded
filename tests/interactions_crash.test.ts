import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { defineAgent, defineTool, isFloretError, openHost } from "@floret/engine";
import { scriptedGateway, type ScriptStep } from "@floret/engine/testing";
import { crashChild, linesOf, withDir } from "./support/crash_harness.ts";
import { openStoreUrl } from "./support/store_url.ts";
import { SECRET as ECHOED, spellings } from "./support/secret_spellings.ts";

const script = fileURLToPath(new URL("./support/interaction_child.ts", import.meta.url));
const SECRET = "SECRET-VALUE-k3y-7781";

async function reopen(url: string, sideFile: string, steps: ScriptStep[]) {
  const gateway = scriptedGateway(steps);
  const runs = { count: 0 };
  const write = defineTool({
    name: "guarded_write",
    description: "Appends a line to the side file",
    input: z.object({ line: z.string() }),
    effect: "write",
    permission: "ask",
    execute: ({ line }) => {
      runs.count++;
      return `ok: ${line}`;
    },
  });
  const host = await openHost({ store: await openStoreUrl(url) });
  const threads = host.threads({
    agent: defineAgent({ id: "parent", systemPrompt: "Crash test.", gateway, tools: [write] }),
  });
  return { host, threads, gateway, runs, sideLines: () => linesOf(sideFile) };
}

/** Every file of the libSQL database (main file, WAL, shared memory). */
function databaseBytes(url: string): Uint8Array[] {
  const path = url.replace(/^file:/, "");
  const dir = dirname(path);
  const base = path.slice(dir.length + 1);
  return readdirSync(dir).filter((name) => name.startsWith(base)).map((name) =>
    new Uint8Array(readFileSync(join(dir, name)))
  );
}

function hits(files: Uint8Array[], text: string): number {
  const needle = new TextEncoder().encode(text);
  let count = 0;
  for (const bytes of files) {
    outer: for (let i = 0; i + needle.length <= bytes.length; i++) {
      for (let j = 0; j < needle.length; j++) if (bytes[i + j] !== needle[j]) continue outer;
      count++;
    }
  }
  return count;
}

describe("interactions across a SIGKILL (libSQL file)", () => {
  test("a pending approval survives the kill; approving after restart runs the tool once", async () => {
    await withDir("approval", async (paths) => {
      const { ready } = await crashChild("approval", paths, undefined, script);
      const e = await reopen(paths.url, paths.sideFile, [{ text: "done" }]);
      const view = await e.threads.view(ready.threadId);
      assert.equal(view.status, "waiting");
      assert.deepEqual(view.pending.map((p) => p.id), [ready.interactionId]);
      assert.equal(view.items.find((i) => i.kind === "tool")?.tool?.status, "waiting_approval");
      await e.threads.respond({
        threadId: ready.threadId,
        requestKey: "approve",
        interactionId: ready.interactionId!,
        decision: "approve",
      });
      const done = await e.threads.waitForIdle(ready.threadId, { timeoutMs: 10_000 });
      assert.equal(done.status, "idle");
      assert.equal(done.turns.at(-1)?.outcome, "completed");
      assert.equal(e.runs.count, 1);
      assert.deepEqual(e.sideLines(), [], "the child never ran it");
      await e.host.shutdown();
    });
  });

  test("an approved write killed mid-run ran exactly once: unknown, never again", async () => {
    await withDir("approved", async (paths) => {
      const { ready } = await crashChild("approved", paths, undefined, script);
      const e = await reopen(paths.url, paths.sideFile, []);
      const view = await e.threads.view(ready.threadId);
      assert.equal(view.status, "idle");
      assert.equal(view.items.find((i) => i.kind === "tool")?.tool?.status, "unknown");
      assert.equal(view.turns.at(-1)?.failure?.code, "effect_outcome_unknown");
      assert.deepEqual(view.pending, []);
      // Approving again replays (same resolution) and runs nothing.
      await e.threads.respond({
        threadId: ready.threadId,
        requestKey: "approve-again",
        interactionId: ready.interactionId!,
        decision: "approve",
      });
      await assert.rejects(
        e.threads.retry({ threadId: ready.threadId, requestKey: "retry" }),
        (error: unknown) => isFloretError(error) && error.code === "no_retry_target",
      );
      assert.equal(e.runs.count, 0);
      assert.deepEqual(e.sideLines(), ["once"]);
      await e.host.shutdown();
    });
  });

  test("a kill while a graceful cancel drains leaves the dispatched write unknown, run once", async () => {
    await withDir("graceful", async (paths) => {
      const { ready } = await crashChild("graceful", paths, undefined, script);
      const e = await reopen(paths.url, paths.sideFile, []);
      const view = await e.threads.view(ready.threadId);
      assert.equal(view.status, "idle");
      assert.equal(view.turns.at(-1)?.outcome, "failed");
      assert.equal(view.turns.at(-1)?.failure?.code, "effect_outcome_unknown");
      assert.deepEqual(e.sideLines(), ["once"]);
      assert.equal(e.runs.count, 0);
      await e.host.shutdown();
    });
  });

  test("a kill after a graceful stop request settles the turn cancelled on the next host, not interrupted", async () => {
    await withDir("graceful_read", async (paths) => {
      const { ready } = await crashChild("graceful_read", paths, undefined, script);
      assert.equal((ready as { stopping?: { mode?: string } }).stopping?.mode, "graceful");
      const e = await reopen(paths.url, paths.sideFile, []);
      const view = await e.threads.waitForIdle(ready.threadId as string, { timeoutMs: 10_000 });
      assert.equal(view.status, "idle");
      assert.equal(view.turns.at(-1)?.outcome, "cancelled");
      assert.equal(view.turns.at(-1)?.failure, undefined);
      assert.equal(view.stopping, undefined, "cleared once the turn settled");
      assert.equal(e.runs.count, 0);
      await e.host.shutdown();
    });
  });

  test("a secret answer lost with its run is asked again; the database never held it", async () => {
    await withDir("secret", async (paths) => {
      const { ready } = await crashChild("secret", paths, undefined, script);
      assert.equal(hits(databaseBytes(paths.url), SECRET), 0, "raw bytes after the kill");
      const e = await reopen(paths.url, paths.sideFile, [{ text: "logged in" }]);
      const view = await e.threads.view(ready.threadId);
      assert.equal(view.status, "waiting");
      assert.equal(view.pending.length, 1);
      const again = view.pending[0];
      assert.notEqual(again.id, ready.interactionId, "a new pending interaction");
      assert.deepEqual(again.questions?.map((q) => [q.id, q.secret]), [["pw", true]]);
      await e.threads.respond({
        threadId: ready.threadId,
        requestKey: "again",
        interactionId: again.id,
        answers: [{ questionId: "pw", value: SECRET }],
      });
      const done = await e.threads.waitForIdle(ready.threadId, { timeoutMs: 10_000 });
      assert.equal(done.turns.at(-1)?.outcome, "completed");
      assert.ok(JSON.stringify(e.gateway.requests[0].messages).includes(SECRET));
      await e.host.shutdown();
      assert.equal(hits(databaseBytes(paths.url), SECRET), 0, "raw bytes after the second run");
      assert.ok(hits(databaseBytes(paths.url), "redacted") > 0, "the redaction marker is stored");
    });
  });

  test("what the model wrote with a secret answer is stored redacted; the tool got it; a restart asks again", async () => {
    await withDir("secret_echo", async (paths) => {
      const { ready } = await crashChild("secret_echo", paths, undefined, script);
      assert.deepEqual(
        linesOf(paths.sideFile),
        [ECHOED],
        "the running tool got the real arguments",
      );
      const files = databaseBytes(paths.url);
      for (const [name, spelled] of Object.entries(spellings(ECHOED))) {
        assert.equal(hits(files, spelled), 0, `the database holds the secret ${name}`);
      }
      assert.ok(hits(files, "Using [secret answer redacted] now.") > 0, "the text, redacted");
      const e = await reopen(paths.url, paths.sideFile, []);
      const view = await e.threads.view(ready.threadId);
      assert.equal(view.status, "waiting");
      assert.equal(view.pending.length, 1);
      assert.notEqual(view.pending[0].id, ready.interactionId, "asked again");
      assert.deepEqual(view.pending[0].questions?.map((q) => [q.id, q.secret]), [["pw", true]]);
      assert.ok(!JSON.stringify(view).includes(ECHOED));
      assert.equal(e.runs.count, 0);
      await e.host.shutdown();
    });
  });
});
