// Audit (round 11) of leases through the public API: since round 10 one lease
// timer serves back-to-back runs (unreferenced between runs, cleared by an
// idle tick). A run that starts right after another, or after an idle spell,
// must still have its lease renewed: a second host on the same store (short
// leases) must not take over its thread while it runs, in this process or
// when the first host is another process, and must take over once that
// process is killed and the lease lapsed.
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { defineAgent, defineTool, openHost, type ToolContext } from "@floret/engine";
import { libsqlStore } from "@floret/engine/libsql";
import { scriptedGateway, type ScriptStep } from "@floret/engine/testing";
import { watchdog } from "./support/robust.ts";

const dir = mkdtempSync(join(tmpdir(), "floret-audit-leases-"));
after(() => rmSync(dir, { recursive: true, force: true }));
let dbs = 0;
const newUrl = (): string => `file:${join(dir, `lease-${++dbs}.db`)}`;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

// Short enough for quick tests, long enough that a loaded machine does not let a renewed lease lapse.
const LEASE_MS = 600;

/** Creates one thread on `url` with a setup host that then goes away. */
async function createThread(url: string): Promise<string> {
  const host = await openHost({ store: libsqlStore({ url }), hostId: "setup" });
  const agent = defineAgent({
    id: "lease",
    systemPrompt: "Lease test.",
    gateway: scriptedGateway([]),
  });
  const { threadId } = await host.threads({ agent }).create({ requestKey: "create" });
  await host.shutdown();
  return threadId;
}

describe("audit lifecycle: leases across runs in one process", () => {
  for (const idleMs of [0, LEASE_MS * 1.5]) {
    test(
      `a long run ${
        idleMs ? "after an idle spell" : "right after short runs"
      } keeps its lease against a second host`,
      {
        timeout: 60_000,
      },
      async () => {
        await watchdog(30_000, async () => {
          const url = newUrl();
          const threadId = await createThread(url);
          let release!: () => void;
          const released = new Promise<void>((resolve) => (release = resolve));
          let startedResolve!: () => void;
          const started = new Promise<void>((resolve) => (startedResolve = resolve));
          const slow = defineTool({
            name: "slow",
            description: "Waits for the test",
            input: z.object({}),
            effect: "read",
            execute: async () => {
              startedResolve();
              await released;
              return "slow done";
            },
          });
          const steps: ScriptStep[] = [
            { text: "quick 0" },
            { text: "quick 1" },
            { text: "quick 2" },
            { toolCalls: [{ name: "slow", arguments: {}, callId: "slow-1" }] },
            { text: "long done" },
            { text: "queued done" },
          ];
          const a = await openHost({
            store: libsqlStore({ url }),
            hostId: "a",
            leaseTtlMs: LEASE_MS,
          });
          const b = await openHost({
            store: libsqlStore({ url }),
            hostId: "b",
            leaseTtlMs: LEASE_MS,
          });
          try {
            const threadsA = a.threads({
              agent: defineAgent({
                id: "lease",
                systemPrompt: "Lease test.",
                gateway: scriptedGateway(steps),
                tools: [slow],
              }),
            });
            const threadsB = b.threads({
              agent: defineAgent({
                id: "lease",
                systemPrompt: "Lease test.",
                gateway: scriptedGateway([{ text: "from b" }]),
                tools: [slow],
              }),
            });
            for (let i = 0; i < 3; i++) {
              await threadsA.send({ threadId, requestKey: `q${i}`, input: { text: `q${i}` } });
              const view = await threadsA.waitForIdle(threadId, { timeoutMs: 10_000 });
              assert.equal(view.turns.at(-1)?.outcome, "completed");
            }
            if (idleMs) await sleep(idleMs);
            const long = await threadsA.send({
              threadId,
              requestKey: "long",
              input: { text: "long" },
            });
            assert.equal(long.queued, false);
            await started;
            // Several lease lengths with no commit of A's: only the renewal keeps the lease live.
            await sleep(LEASE_MS * 3);
            const early = await threadsB.send({
              threadId,
              requestKey: "early",
              input: { text: "early" },
            });
            assert.equal(early.queued, true, "host b took over a turn whose run is alive");
            assert.equal(early.view.status, "running");
            assert.equal(early.view.turns.at(-1)?.turnId, long.turnId);
            assert.equal(early.view.turns.at(-1)?.outcome, undefined);
            // Host b waits for a turn another host runs (it polls the store).
            const watchedByB = threadsB.waitForIdle(threadId, { timeoutMs: 10_000 });
            release();
            const done = await threadsA.waitForIdle(threadId, { timeoutMs: 10_000 });
            const seenByB = await watchedByB;
            // The long turn completed on a and handed over to b's queued input; both hosts
            // read the same thread.
            const shape = (view: typeof done) => ({
              status: view.status,
              outcomes: view.turns.map((turn) => turn.outcome),
              queue: view.queue.length,
              texts: view.items.map((item) => item.text ?? item.tool?.output),
            });
            assert.deepEqual(shape(done), {
              status: "idle",
              outcomes: ["completed", "completed", "completed", "completed", "completed"],
              queue: 0,
              texts: [
                "q0",
                "quick 0",
                "q1",
                "quick 1",
                "q2",
                "quick 2",
                "long",
                "slow done",
                "long done",
                "early",
                "queued done",
              ],
            });
            assert.deepEqual(shape(seenByB), shape(done));
            const longTurn = done.turns.find((turn) => turn.turnId === long.turnId);
            assert.equal(longTurn?.outcome, "completed", JSON.stringify(done.turns));
            assert.ok(
              done.items.some((item) => item.kind === "tool" && item.tool?.output === "slow done"),
            );
          } finally {
            release();
            await a.shutdown();
            await b.shutdown();
          }
        });
      },
    );
  }
});

describe("audit lifecycle: leases of waiting and resumed turns", () => {
  test("a second host queues behind a waiting turn and behind the run respond resumed", {
    timeout: 60_000,
  }, async () => {
    await watchdog(30_000, async () => {
      const url = newUrl();
      const threadId = await createThread(url);
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      const slow = defineTool({
        name: "slow",
        description: "Needs approval, then waits for the test",
        input: z.object({}),
        effect: "write",
        permission: "ask",
        execute: async () => {
          await released;
          return "slow done";
        },
      });
      const agent = (steps: ScriptStep[]) =>
        defineAgent({
          id: "lease",
          systemPrompt: "Lease test.",
          gateway: scriptedGateway(steps),
          tools: [slow],
        });
      const a = await openHost({ store: libsqlStore({ url }), hostId: "a", leaseTtlMs: LEASE_MS });
      const b = await openHost({ store: libsqlStore({ url }), hostId: "b", leaseTtlMs: LEASE_MS });
      try {
        const threadsA = a.threads({
          agent: agent([
            { toolCalls: [{ name: "slow", arguments: {}, callId: "s1" }] },
            { text: "done" },
            { text: "early done" },
            { text: "late done" },
          ]),
        });
        const threadsB = b.threads({ agent: agent([]) });
        await threadsA.send({ threadId, requestKey: "s", input: { text: "go" } });
        const waiting = await threadsA.waitForIdle(threadId, { timeoutMs: 10_000 });
        assert.equal(waiting.status, "waiting");
        // No run holds a waiting turn; its lease lapses, and still b must not end it.
        await sleep(LEASE_MS * 2);
        const early = await threadsB.send({
          threadId,
          requestKey: "early",
          input: { text: "early" },
        });
        assert.equal(early.queued, true);
        assert.equal(early.view.status, "waiting");
        assert.deepEqual(early.view.pending.map((p) => p.id), waiting.pending.map((p) => p.id));
        await threadsA.respond({
          threadId,
          requestKey: "yes",
          interactionId: waiting.pending[0].id,
          decision: "approve",
        });
        // The resumed run's tool waits several lease lengths: only renewals keep its lease.
        await sleep(LEASE_MS * 3);
        const late = await threadsB.send({ threadId, requestKey: "late", input: { text: "late" } });
        assert.equal(late.queued, true, "host b took over the resumed run's turn");
        assert.equal(late.view.status, "running");
        release();
        const done = await threadsA.waitForIdle(threadId, { timeoutMs: 10_000 });
        assert.deepEqual(done.turns.map((turn) => turn.outcome), [
          "completed",
          "completed",
          "completed",
        ]);
        assert.deepEqual(
          done.items.map((item) => item.text ?? item.tool?.output),
          ["go", "slow done", "done", "early", "early done", "late", "late done"],
        );
      } finally {
        release();
        await a.shutdown();
        await b.shutdown();
      }
    });
  });
});

describe("audit lifecycle: a cancel from another host", () => {
  for (const effect of ["read", "write"] as const) {
    test(`stops the run on the host that runs it and aborts its ${effect} tool's signal`, {
      timeout: 60_000,
    }, async () => {
      await watchdog(30_000, async () => {
        const url = newUrl();
        const threadId = await createThread(url);
        const contexts: ToolContext[] = [];
        let release: (output: string) => void = () => {};
        let startedResolve!: () => void;
        const started = new Promise<void>((resolve) => (startedResolve = resolve));
        const held = defineTool({
          name: "held",
          description: "Waits for the test and never reads its signal",
          input: z.object({}),
          effect,
          execute: (_input, context) => {
            contexts.push(context);
            startedResolve();
            return new Promise<string>((resolve) => (release = resolve));
          },
        });
        const agent = (steps: ScriptStep[]) =>
          defineAgent({
            id: "lease",
            systemPrompt: "Lease test.",
            gateway: scriptedGateway(steps),
            tools: [held],
          });
        const a = await openHost({
          store: libsqlStore({ url }),
          hostId: "a",
          leaseTtlMs: LEASE_MS,
        });
        const b = await openHost({
          store: libsqlStore({ url }),
          hostId: "b",
          leaseTtlMs: LEASE_MS,
        });
        try {
          const threadsA = a.threads({
            agent: agent([
              { toolCalls: [{ name: "held", arguments: {}, callId: "h1" }] },
              { text: "next turn" },
            ]),
          });
          const threadsB = b.threads({ agent: agent([]) });
          await threadsA.send({ threadId, requestKey: "s", input: { text: "go" } });
          await started;
          const { view } = await threadsB.cancel({ threadId, requestKey: "stop" });
          const expected = effect === "write"
            ? { status: "unknown", outcome: "failed", code: "effect_outcome_unknown" }
            : { status: "cancelled", outcome: "cancelled", code: undefined };
          const shape = (v: typeof view) => ({
            status: v.items.find((item) => item.kind === "tool")?.tool?.status,
            outcome: v.turns.at(-1)?.outcome,
            code: v.turns.at(-1)?.failure?.code,
          });
          assert.deepEqual(shape(view), expected);
          // Host a learns at its next lease renewal, at the latest, and stops the run.
          for (let i = 0; i < 4000 && !contexts[0].signal.aborted; i++) await sleep(10);
          assert.equal(contexts[0].signal.aborted, true, "the tool on host a was not told to stop");
          release("late");
          await sleep(50);
          assert.deepEqual(shape(await threadsA.view(threadId)), expected);
          const next = await threadsA.send({
            threadId,
            requestKey: "s2",
            input: { text: "again" },
          });
          assert.equal(next.queued, false);
          const done = await threadsA.waitForIdle(threadId, { timeoutMs: 10_000 });
          assert.deepEqual(done.turns.map((turn) => turn.outcome), [expected.outcome, "completed"]);
          assert.equal(done.items.at(-1)?.text, "next turn");
        } finally {
          release("x");
          await a.shutdown();
          await b.shutdown();
        }
      });
    });
  }
});

/** Runs the lease child on this runtime until it prints its ACK; returns it and a killer. */
function startChild(config: Record<string, unknown>): Promise<{
  ack: { turnId: string; queued: boolean };
  kill: () => Promise<void>;
  stderr: () => string;
}> {
  const child = fileURLToPath(new URL("./support/audit_lease_child.ts", import.meta.url));
  const arg = JSON.stringify(config);
  const [cmd, argv]: [string, string[]] = "Deno" in globalThis
    ? [process.execPath, ["run", "-A", child, arg]]
    : "Bun" in globalThis
    ? [process.execPath, [child, arg]]
    : [process.execPath, ["--import", "tsx", child, arg]];
  const proc = spawn(cmd, argv, { stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  let buffered = "";
  const closed = new Promise<void>((resolve) => proc.on("close", () => resolve()));
  proc.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    proc.on("error", reject);
    void closed.then(() => reject(new Error(`the child ended before its ACK:\n${stderr}`)));
    proc.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      buffered += chunk;
      const line = buffered.split("\n").find((l) => l.startsWith("ACK "));
      if (!line) return;
      resolve({
        ack: JSON.parse(line.slice(4)),
        kill: async () => {
          proc.kill("SIGKILL");
          await closed;
        },
        stderr: () => stderr,
      });
    });
  });
}

describe("audit lifecycle: leases across processes", () => {
  test(
    "a run started after back-to-back runs and an idle spell is renewed until its process is killed",
    {
      timeout: 90_000,
    },
    async () => {
      const leaseMs = 800;
      const url = newUrl();
      const threadId = await createThread(url);
      const child = await startChild({
        url,
        hostId: "victim",
        leaseTtlMs: leaseMs,
        threadId,
        quick: 3,
        idleMs: leaseMs * 1.5,
      });
      let killed = false;
      const gw = scriptedGateway([{ text: "survivor answers" }, { text: "early answered" }]);
      const survivor = await openHost({
        store: libsqlStore({ url }),
        hostId: "survivor",
        leaseTtlMs: leaseMs,
      });
      try {
        assert.equal(child.ack.queued, false);
        const threads = survivor.threads({
          agent: defineAgent({
            id: "lease",
            systemPrompt: "Lease test.",
            gateway: gw,
          }),
        });
        // Several lease lengths after the victim's last commit: its renewals keep the turn.
        await sleep(leaseMs * 3);
        const early = await threads.send({
          threadId,
          requestKey: "early",
          input: { text: "early" },
        });
        assert.equal(early.queued, true, `the survivor took a live turn; child: ${child.stderr()}`);
        assert.equal(early.view.status, "running");
        assert.equal(early.view.turns.at(-1)?.turnId, child.ack.turnId);
        // A wait that starts while the victim runs: once the victim is gone and its lease
        // lapsed, nothing runs the turn anywhere, so the wait must settle it and resolve
        // (it cannot count on another command coming).
        const waited = threads.waitForIdle(threadId, { timeoutMs: 20_000 }).then(
          (view) => view,
          (error) => error.code as string,
        );
        await child.kill();
        killed = true;
        const afterKill = await waited;
        assert.notEqual(typeof afterKill, "string", `waitForIdle rejected: ${afterKill}`);
        const idle = afterKill as typeof early.view;
        assert.equal(idle.status, "idle");
        assert.equal(idle.turns.at(-1)?.turnId, child.ack.turnId);
        assert.equal(idle.turns.at(-1)?.outcome, "interrupted");
        assert.deepEqual(idle.queue.map((queued) => queued.text), ["early"]);
        // The next command runs its own turn.
        const late = await threads.send({ threadId, requestKey: "late", input: { text: "late" } });
        assert.equal(late.queued, false);
        const settled = await threads.waitForIdle(threadId, { timeoutMs: 20_000 });
        const victim = settled.turns.find((turn) => turn.turnId === child.ack.turnId);
        assert.equal(victim?.outcome, "interrupted");
        assert.equal(settled.turns.at(-1)?.outcome, "completed", JSON.stringify(settled.turns));
        assert.deepEqual(settled.turns.map((turn) => turn.outcome), [
          "completed",
          "completed",
          "completed",
          "interrupted",
          "completed",
          "completed",
        ]);
        // The early input stayed queued after the interrupted turn; the late turn completed and
        // handed over to it.
        assert.deepEqual(settled.queue, []);
        assert.deepEqual(
          settled.items.filter((item) => item.kind === "user").map((item) => item.text),
          ["quick 0", "quick 1", "quick 2", "long", "late", "early"],
        );
      } finally {
        if (!killed) await child.kill();
        await survivor.shutdown();
      }
    },
  );
});
