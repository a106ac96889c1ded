// Restore rehearsal and crashes around the host lifecycle (issue 15), on
// libSQL files: a process SIGKILLed during a title request leaves a title
// that falls back; a copy of a stopped store, opened deferred and prepared
// with prepareRestore, runs nothing old, releases pending approvals as
// cancelled and offers its queued inputs again. The copy is taken with
// backupLibsql while the live host still has the file open.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { defineAgent, defineTool, FloretError, openHost, type ThreadView } from "@floret/engine";
import { backupLibsql, libsqlStore } from "@floret/engine/libsql";
import { scriptedGateway } from "@floret/engine/testing";
import { FAST_RETRY } from "./support/engine.ts";
import { titleGateway } from "./support/title_gateway.ts";

const isCode = (code: string) => (error: unknown) =>
  error instanceof FloretError && error.code === code;

async function withDir(body: (dir: string) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "floret-lifecycle-"));
  try {
    await body(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function childCommand(args: string[]): [string, string[]] {
  const child = fileURLToPath(new URL("./support/lifecycle_child.ts", import.meta.url));
  if ("Deno" in globalThis) return [process.execPath, ["run", "-A", child, ...args]];
  if ("Bun" in globalThis) return [process.execPath, [child, ...args]];
  return [process.execPath, ["--import", "tsx", child, ...args]];
}

/** Runs the child until it prints READY, then SIGKILLs it. */
function crashAtReady(url: string): Promise<{ threadId: string; titleStatus: string }> {
  const [cmd, argv] = childCommand([url]);
  return new Promise((resolve, reject) => {
    const proc = spawn(cmd, argv, { stdio: ["ignore", "pipe", "pipe"] });
    let ready: { threadId: string; titleStatus: string } | undefined;
    let out = "";
    let err = "";
    const timer = setTimeout(() => proc.kill("SIGKILL"), 25_000);
    proc.stderr.setEncoding("utf8").on("data", (chunk: string) => (err += chunk));
    proc.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      out += chunk;
      const line = out.split("\n").find((l) => l.startsWith("READY "));
      if (line && !ready) {
        ready = JSON.parse(line.slice(6));
        proc.kill("SIGKILL");
      }
    });
    proc.on("close", (_code, signal) => {
      clearTimeout(timer);
      if (ready && signal === "SIGKILL") resolve(ready);
      else reject(new Error(`Child did not reach READY (signal ${signal}):\n${err}`));
    });
  });
}

describe("crashes", () => {
  test("SIGKILL during a title request: after restart the title falls back", {
    timeout: 60_000,
  }, async () => {
    await withDir(async (dir) => {
      const url = `file:${join(dir, "journal.db")}`;
      const ready = await crashAtReady(url);
      assert.equal(ready.titleStatus, "pending");
      const host = await openHost({ store: libsqlStore({ url }) });
      try {
        const threads = host.threads({
          agent: defineAgent({
            id: "titled",
            systemPrompt: "x",
            gateway: titleGateway([], { text: "Never asked" }),
            titles: "provider",
          }),
        });
        const view = await threads.view(ready.threadId);
        assert.deepEqual([view.title, view.titleStatus, view.titleGeneration], [
          "Crash course",
          "fallback",
          1,
        ]);
        assert.equal(view.turns[0].outcome, "completed");
      } finally {
        await host.shutdown();
      }
    });
  });
});

describe("restore rehearsal on a libSQL file", () => {
  test("prepareRestore stops old turns, releases approvals and queued inputs, and is idempotent", {
    timeout: 60_000,
  }, async () => {
    await withDir(async (dir) => {
      const source = join(dir, "live.db");
      const backup = join(dir, "restored.db");
      let written = 0;
      const write = defineTool({
        name: "write_file",
        description: "Writes a file (a side effect), then never returns, abort or not",
        input: z.object({ path: z.string() }),
        effect: "write",
        execute: async () => {
          written++;
          return await new Promise<string>(() => {});
        },
      });
      let approvedRan = 0;
      const approveMe = defineTool({
        name: "approve_me",
        description: "Needs a person's approval",
        input: z.object({}),
        effect: "write",
        permission: "ask",
        execute: () => {
          approvedRan++;
          return "ran";
        },
      });
      // The live deployment: two threads caught mid-flight, one waiting for an approval, one idle.
      const live = await openHost({ store: libsqlStore({ url: `file:${source}` }) });
      const liveThreads = live.threads({
        agent: defineAgent({
          id: "ops",
          systemPrompt: "x",
          gateway: scriptedGateway([
            { hang: true }, // thread A streams forever
            { toolCalls: [{ name: "write_file", arguments: { path: "/tmp/x" } }] }, // thread B
            { text: "Done." }, // thread C completes
            { toolCalls: [{ name: "approve_me", arguments: {} }] }, // thread D waits
          ]),
          tools: [write, approveMe],
          providerRetry: FAST_RETRY,
        }),
      });
      const a = (await liveThreads.create({ requestKey: "a" })).threadId;
      const b = (await liveThreads.create({ requestKey: "b" })).threadId;
      const c = (await liveThreads.create({ requestKey: "c" })).threadId;
      await liveThreads.send({ threadId: a, requestKey: "a1", input: { text: "Long job" } });
      await liveThreads.send({ threadId: a, requestKey: "a2", input: { text: "Then this" } });
      await liveThreads.send({ threadId: a, requestKey: "a3", input: { text: "And this" } });
      await liveThreads.send({ threadId: b, requestKey: "b1", input: { text: "Write it" } });
      const deadline = Date.now() + 5_000;
      while (written === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
      assert.equal(written, 1);
      await liveThreads.send({ threadId: c, requestKey: "c1", input: { text: "Quick" } });
      await liveThreads.waitForIdle(c, { timeoutMs: 5_000 });
      const d = (await liveThreads.create({ requestKey: "d" })).threadId;
      await liveThreads.send({ threadId: d, requestKey: "d1", input: { text: "Needs approval" } });
      const waitingD = await liveThreads.waitForIdle(d, { timeoutMs: 5_000 });
      assert.equal(waitingD.status, "waiting");
      const approvalId = waitingD.pending[0].id;

      // A consistent copy, taken while the live host still has the file open.
      await backupLibsql({ url: `file:${source}` }, backup);
      // Runs stop where they are and their turns stay unfinished in the store; the
      // signal bounds the wait for the write that never returns.
      await live.shutdown({ signal: AbortSignal.timeout(1_000) });

      // The restored copy: open deferred, prepare, then activate.
      const phases: string[] = [];
      const restored = await openHost({
        store: libsqlStore({ url: `file:${backup}` }),
        deferExecution: true,
        onStartup: (phase) => phases.push(phase),
      });
      assert.deepEqual(phases, ["verifying"]); // no migration runs (DESIGN §11)
      const gateway = scriptedGateway([{ text: "Fresh answer." }]);
      const threads = restored.threads({
        agent: defineAgent({ id: "ops", systemPrompt: "x", gateway, tools: [write, approveMe] }),
      });
      try {
        // Reads work before anything is settled: the old turns still read as running.
        assert.equal((await threads.view(a)).status, "running");
        await assert.rejects(
          threads.send({ threadId: c, requestKey: "c2", input: { text: "Hi" } }),
          isCode("execution_deferred"),
        );

        assert.equal((await threads.view(d)).pending.length, 1, "read before prepareRestore");
        const report = await restored.prepareRestore();
        assert.deepEqual(report, { stoppedTurns: 3, releasedInteractions: 1, restoredInputs: 2 });

        const viewA = await threads.view(a);
        assert.equal(viewA.status, "idle");
        assert.deepEqual(viewA.queue, []);
        assert.deepEqual(viewA.restoredInputs?.map((input) => [input.requestKey, input.text]), [
          ["a2", "Then this"],
          ["a3", "And this"],
        ]);
        assert.equal(viewA.turns[0].outcome, "interrupted");
        assert.equal(viewA.turns[0].failure?.code, "restored_turn");

        const viewB = await threads.view(b);
        assert.equal(viewB.turns[0].outcome, "interrupted");
        assert.equal(viewB.turns[0].failure?.code, "restored_turn");
        assert.equal(toolStatus(viewB), "unknown", "the side effect stays in doubt, honestly");
        assert.equal((await threads.view(c)).turns[0].outcome, "completed");

        const viewD = await threads.view(d);
        assert.equal(viewD.status, "idle");
        assert.deepEqual(viewD.pending, []);
        assert.equal(viewD.turns[0].failure?.code, "restored_turn");
        assert.equal(toolStatus(viewD), "cancelled", "the approval was released as cancelled");

        // Idempotent: nothing left to do.
        assert.deepEqual(await restored.prepareRestore(), {
          stoppedTurns: 0,
          releasedInteractions: 0,
          restoredInputs: 0,
        });

        await restored.activate();
        await assert.rejects(restored.prepareRestore(), isCode("invalid_input"));
        await assert.rejects(
          threads.retry({ threadId: a, requestKey: "r" }),
          isCode("no_retry_target"),
        );
        await assert.rejects(
          threads.retry({ threadId: b, requestKey: "r" }),
          isCode("no_retry_target"),
        );
        const restoredId = viewA.restoredInputs![0].id;
        await assert.rejects(
          threads.promoteQueued({ threadId: a, requestKey: "p", queueId: restoredId }),
          isCode("invalid_input"),
        );
        // The host offers the input again, under current authority, as a new send.
        await threads.send({ threadId: a, requestKey: "again", input: { text: "Then this" } });
        const after = await threads.waitForIdle(a, { timeoutMs: 5_000 });
        assert.equal(after.turns.at(-1)?.outcome, "completed");
        const dismissed = await threads.deleteQueued({
          threadId: a,
          requestKey: "dismiss",
          queueId: restoredId,
        });
        assert.deepEqual(dismissed.view.restoredInputs?.map((input) => input.text), ["And this"]);
        await assert.rejects(
          threads.respond({
            threadId: d,
            requestKey: "late",
            interactionId: approvalId,
            decision: "approve",
          }),
          (error: unknown) => error instanceof FloretError,
          "a released approval cannot be answered",
        );
        assert.equal(written, 1, "nothing old ran again");
        assert.equal(approvedRan, 0, "the released approval's call never ran");
        assert.equal(gateway.requests.length, 1);
      } finally {
        await restored.shutdown();
      }

      // Restart-safe: the released approval stays released in the restored store.
      const reopenedCopy = await openHost({ store: libsqlStore({ url: `file:${backup}` }) });
      try {
        const copyThreads = reopenedCopy.threads({
          agent: defineAgent({
            id: "ops",
            systemPrompt: "x",
            gateway: scriptedGateway([]),
            tools: [write, approveMe],
          }),
        });
        const viewD = await copyThreads.view(d);
        assert.equal(viewD.status, "idle");
        assert.deepEqual(viewD.pending, []);
        assert.equal(viewD.turns[0].failure?.code, "restored_turn");
        assert.equal(approvedRan, 0);
      } finally {
        await reopenedCopy.shutdown();
      }

      // The live file was not touched by the rehearsal: a normal restart recovers it as usual.
      const reopened = await openHost({ store: libsqlStore({ url: `file:${source}` }) });
      try {
        const again = reopened.threads({
          agent: defineAgent({ id: "ops", systemPrompt: "x", gateway: scriptedGateway([]) }),
        });
        const viewA = await again.view(a);
        assert.equal(viewA.turns[0].failure?.code, "interrupted");
        assert.equal(viewA.queue.length, 2);
        assert.equal(viewA.restoredInputs, undefined);
      } finally {
        await reopened.shutdown();
      }
    });
  });
});

function toolStatus(view: ThreadView): string | undefined {
  return view.items.find((item) => item.kind === "tool")?.tool?.status;
}
